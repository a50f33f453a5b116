// MIG layouts: the NVIDIA MIG manager's named configurations (mig-parted's config file, the value
// space of the node label nvidia.com/mig.config), and what each makes of a node's GPUs.
//
// The file format is mig-parted's v1 (`version: v1`, `mig-configs: {<name>: [<spec>, ...]}`, a spec
// being `device-filter` (PCI IDs, optional), `devices` (`all` or GPU indices), `mig-enabled` and
// `mig-devices` ({profile: count per GPU})), so an operator can hand gpusched the very file their
// MIG manager reads. It is read strictly: unknown keys, wrong types and out-of-range counts are
// errors naming FILE:LINE:COLUMN: KEY (codec/strict_yaml.h). A layout name must be a valid label
// value, since it goes into a `kubectl label` command. The defaults for A100-40GB, A100-80GB and
// H100-80GB are bundled (src/planning/mig_layouts.yaml, compiled in as kDefaultMigLayoutsYaml).
//
// Which GPU a node has comes from its labels (nvidia.com/gpu.product, else nvidia.com/gpu.memory):
// gpusched knows the MIG profiles of a few models (A100-40GB, A100-80GB, H100-80GB; MigModelOf),
// each with the PCI IDs its product name stands for, which device filters are matched against. A
// layout applies to a node when every one of its GPUs is matched by exactly one spec, and every
// profile a matching spec asks for exists on that model within one GPU's memory and compute slices
// (slice counts, not the placement slots); otherwise the layout is not offered for that node. Value
// types and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/model/gpu_labels.h"
#include "gpusched/util/validated.h"

namespace gpusched {

// The bundled layouts (src/planning/mig_layouts.yaml).
extern const std::string_view kDefaultMigLayoutsYaml;

// Limits on a layouts file: the MIG manager's default has about 50 layouts of a few specs.
inline constexpr size_t kMaxMigLayoutsBytes = size_t{1} << 20;
inline constexpr size_t kMaxMigLayouts = 512;
inline constexpr size_t kMaxSpecsPerLayout = 64;
inline constexpr size_t kMaxProfilesPerSpec = 16;
inline constexpr size_t kMaxDeviceFilters = 64;
inline constexpr int64_t kMaxMigDeviceIndex = 1023;

// One MIG profile of a GPU model: its slices of the GPU and how many fit alone.
struct MigProfileShape {
  std::string_view name;  // as the MIG manager writes it: "1g.10gb", "1g.10gb+me"
  int compute_slices = 0;
  int memory_slices = 0;
  int max_count = 0;
};

// A GPU model MIG partitions. Memory slices per GPU: 8; compute slices: 7.
struct MigGpuModel {
  std::string_view name;  // "A100-40GB"
  std::span<const std::string_view> pci_ids;
  std::span<const MigProfileShape> profiles;

  const MigProfileShape* Profile(std::string_view name) const;
};

// The model of a node's GPUs from its labels: the product (an old driver's spelling without
// "NVIDIA-", a "-MIG-<profile>" suffix under the single strategy are understood), the memory label
// when the product does not say 40GB or 80GB; nullptr when unknown.
const MigGpuModel* MigModelOf(const GpuLabels& gpu);

struct MigLayoutSpec {
  std::vector<std::string> device_filter;  // PCI IDs, upper case; empty: every GPU
  bool all_devices = true;
  std::vector<int64_t> devices;  // GPU indices when !all_devices, sorted, unique
  bool mig_enabled = false;
  std::map<std::string, int64_t> mig_devices;  // profile as written -> count per GPU
};

struct MigLayouts {
  std::string source;  // "bundled defaults" or the file's path
  std::map<std::string, std::vector<MigLayoutSpec>> layouts;
};

// The layouts `yaml` describes, their source set to `file_name`, with every problem found
// (FILE:LINE:COLUMN: KEY: PROBLEM, at most 100); complete when ok().
Validated<MigLayouts> ParseMigLayouts(std::string_view yaml, std::string_view file_name);
// The file at `path`, or the bundled defaults when `path` is empty; a file that cannot be read
// gives one problem naming it.
Validated<MigLayouts> LoadMigLayouts(const std::string& path);

// What a layout makes of one node: whole GPUs (MIG disabled) and MIG slices per resource profile
// ("1g.10gb", "1g.10gb.me": '+' written as '.', as the device plugin names resources).
struct MigNodeOffer {
  int64_t whole_gpus = 0;
  std::map<std::string, int64_t> slices;
  bool operator==(const MigNodeOffer&) const = default;
};

// The offer of `layout` on a node of `gpus` GPUs of `model`, or nullopt when it does not apply
// (see the top of this file).
std::optional<MigNodeOffer> OfferOf(const std::vector<MigLayoutSpec>& layout,
                                    const MigGpuModel& model, int64_t gpus);

// "1g.10gb+me" -> "1g.10gb.me".
std::string ResourceProfileOf(std::string_view profile);

}  // namespace gpusched
