#include "gpusched/model/known_mig_profiles.h"

#include <array>

namespace gpusched {
namespace {

constexpr std::string_view kA30[] = {"1g.6gb", "1g.6gb.me", "2g.12gb", "2g.12gb.me", "4g.24gb"};
constexpr std::string_view kA100_40[] = {"1g.5gb",  "1g.5gb.me", "1g.10gb", "2g.10gb",
                                         "3g.20gb", "4g.20gb",   "7g.40gb"};
// A100 80 GB and H100 80 GB share their profiles.
constexpr std::string_view k80GB[] = {"1g.10gb", "1g.10gb.me", "1g.20gb", "2g.20gb",
                                      "3g.40gb", "4g.40gb",    "7g.80gb"};
constexpr std::string_view kH100Nvl[] = {"1g.12gb", "1g.12gb.me", "1g.24gb", "2g.24gb",
                                         "3g.47gb", "4g.47gb",    "7g.94gb"};
constexpr std::string_view kGh200_480[] = {"1g.12gb", "1g.12gb.me", "1g.24gb", "2g.24gb",
                                           "3g.48gb", "4g.48gb",    "7g.96gb"};
constexpr std::string_view kH200[] = {"1g.18gb", "1g.18gb.me", "1g.35gb", "2g.35gb",
                                      "3g.71gb", "4g.71gb",    "7g.141gb"};
constexpr std::string_view kGh200_144[] = {"1g.18gb", "1g.36gb", "2g.36gb",
                                           "3g.72gb", "4g.72gb", "7g.144gb"};
constexpr std::string_view kB200[] = {"1g.23gb", "1g.23gb.me", "1g.45gb", "2g.45gb",
                                      "3g.90gb", "4g.90gb",    "7g.180gb"};

constexpr std::array kProducts = {
    KnownMigProduct{"NVIDIA-A30", kA30},
    KnownMigProduct{"NVIDIA-A100-SXM4-40GB", kA100_40},
    KnownMigProduct{"NVIDIA-A100-SXM4-80GB", k80GB},
    KnownMigProduct{"NVIDIA-H100-80GB-HBM3", k80GB},
    KnownMigProduct{"NVIDIA-H100-NVL", kH100Nvl},
    KnownMigProduct{"NVIDIA-GH200-480GB", kGh200_480},
    KnownMigProduct{"NVIDIA-H200", kH200},
    KnownMigProduct{"NVIDIA-GH200-144G-HBM3e", kGh200_144},
    KnownMigProduct{"NVIDIA-B200", kB200},
};

}  // namespace

std::span<const KnownMigProduct> KnownMigProducts() { return kProducts; }

}  // namespace gpusched
