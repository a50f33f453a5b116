// The MIG profiles NVIDIA documents per GPU product, as the device plugin advertises them under the
// GPU Operator's `mixed` strategy (nvidia.com/mig-<profile>, '+me' written '.me'). A curated table,
// not read from any cluster: it names the GPU resources a registration must manage when no cluster
// is at hand, or before nodes of a product join one (the products and profiles of NVIDIA's MIG
// user guide: A30, A100 40/80 GB, H100 80 GB, H100 NVL 94 GB, GH200, H200, B200).
//
// Immutable static data; thread-safe.
#pragma once

#include <span>
#include <string_view>

namespace gpusched {

struct KnownMigProduct {
  std::string_view product;  // the nvidia.com/gpu.product label GPU Feature Discovery sets
  std::span<const std::string_view> profiles;  // "1g.10gb", "1g.10gb.me", ... smallest first
};

// Every product of the table, in the order NVIDIA released them.
std::span<const KnownMigProduct> KnownMigProducts();

}  // namespace gpusched
