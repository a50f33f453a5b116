// Small DRA objects in the layout NVIDIA's DRA driver publishes (driver gpu.nvidia.com, one pool
// per node), and claims and pods naming them, for the DRA tests. Header-only.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "gpusched/dra/dra.h"
#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"
#include "testing/test_support.h"

namespace gpusched::testing::dra {

inline DraValue Text(std::string text) {
  return DraValue{DraValue::Kind::kString, 0, false, std::move(text)};
}

inline DraDevice Gpu(int index, const std::string& product = "NVIDIA A100-SXM4-80GB") {
  DraDevice d;
  d.name = "gpu-" + std::to_string(index);
  d.attributes["gpu.nvidia.com/type"] = Text("gpu");
  d.attributes["gpu.nvidia.com/productName"] = Text(product);
  d.attributes["gpu.nvidia.com/uuid"] = Text("GPU-" + std::to_string(index));
  d.capacity["gpu.nvidia.com/memory"] = int64_t{81920} * (int64_t{1} << 20) * 1000;
  return d;
}

inline DraDevice Mig(int parent, const std::string& profile, int index) {
  DraDevice d;
  d.name = "gpu-" + std::to_string(parent) + "-mig-" + profile + "-" + std::to_string(index);
  d.attributes["gpu.nvidia.com/type"] = Text("mig");
  d.attributes["gpu.nvidia.com/profile"] = Text(profile);
  d.attributes["gpu.nvidia.com/productName"] = Text("NVIDIA A100-SXM4-80GB");
  return d;
}

inline DraSlice Slice(const std::string& node, std::vector<DraDevice> devices, int64_t slices = 1,
                      const std::string& name = "") {
  DraSlice s;
  s.name = name.empty() ? node + "-gpu" : name;
  s.driver = "gpu.nvidia.com";
  s.pool = node;
  s.pool_generation = 1;
  s.pool_slice_count = slices;
  s.node_name = node;
  s.devices = std::move(devices);
  return s;
}

inline std::vector<DraDevice> Gpus(int n, const std::string& product = "NVIDIA A100-SXM4-80GB") {
  std::vector<DraDevice> out;
  for (int i = 0; i < n; ++i) out.push_back(Gpu(i, product));
  return out;
}

inline NodeInfo BareNode(const std::string& name) {
  NodeInfo n;
  n.name = name;
  n.allocatable.Set("cpu", 64000);
  n.allocatable.Set("pods", 110000);
  n.capacity = n.allocatable;
  return n;
}

inline DraDeviceClass GpuClass() {
  return {
      "gpu.nvidia.com",
      {"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"},
      "nvidia.com/gpu"};
}

inline DraClaim Claim(const std::string& name, int64_t count,
                      std::vector<std::string> selectors = {}) {
  DraClaim c;
  c.namespace_name = "default";
  c.name = name;
  c.uid = "uid-" + name;
  DraDeviceRequest r;
  r.name = "gpus";
  r.device_class = "gpu.nvidia.com";
  r.count = count;
  r.selectors = std::move(selectors);
  c.requests.push_back(std::move(r));
  return c;
}

inline DraClaim Allocated(DraClaim c, const std::string& node, std::vector<std::string> devices,
                          bool admin = false) {
  c.allocated = true;
  for (const auto& d : devices) c.results.push_back({"gpus", "gpu.nvidia.com", node, d, admin});
  return c;
}

inline PodInfo ClaimPod(const std::string& name, const std::string& claim) {
  PodInfo p = testing::MakePod(name, {{"cpu", 1000}});
  p.namespace_name = "default";
  p.claims.push_back(PodClaimRef{"gpus", claim, false});
  return p;
}

inline DraDeviceClass MigClass() {
  return {
      "mig.nvidia.com",
      {"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"},
      ""};
}

inline DraClaim OfClass(DraClaim claim, const std::string& device_class) {
  claim.requests[0].device_class = device_class;
  return claim;
}

}  // namespace gpusched::testing::dra
