#include "testing/synthetic_cluster.h"

#include <random>

namespace gpusched::testing {
namespace {

using nlohmann::json;

struct Shape {
  const char* product;
  const char* family;
  const char* cc_major;
  const char* cc_minor;
  int memory_mib;
  int gpus;
  const char* instance;
  bool mig_mixed;
  bool time_sliced;
};

// A fleet mix: mostly 8-GPU training nodes, some MIG and some small inference nodes.
const Shape kShapes[] = {
    {"NVIDIA-A100-SXM4-80GB", "ampere", "8", "0", 81920, 8, "p4de.24xlarge", false, false},
    {"NVIDIA-H100-80GB-HBM3", "hopper", "9", "0", 81559, 8, "p5.48xlarge", false, false},
    {"NVIDIA-A100-SXM4-40GB", "ampere", "8", "0", 40960, 8, "p4d.24xlarge", true, false},
    {"Tesla-T4", "turing", "7", "5", 15360, 4, "g4dn.12xlarge", false, true},
    {"NVIDIA-L4", "ada-lovelace", "8", "9", 23034, 8, "g6.48xlarge", false, false},
};
const int kShapeWeights[] = {35, 30, 10, 15, 10};

json Images(std::mt19937_64& rng) {
  static const char* kRepos[] = {"nvcr.io/nvidia/pytorch",
                                 "nvcr.io/nvidia/tritonserver",
                                 "vllm/vllm-openai",
                                 "nvcr.io/nvidia/k8s-device-plugin",
                                 "nvcr.io/nvidia/gpu-feature-discovery",
                                 "registry.k8s.io/kube-proxy",
                                 "docker.io/calico/node",
                                 "nvcr.io/nvidia/dcgm-exporter",
                                 "ghcr.io/huggingface/tgi",
                                 "nvcr.io/nvidia/cuda"};
  json images = json::array();
  for (int i = 0; i < 24; ++i) {
    std::string repo = kRepos[i % 10];
    std::string digest = "sha256:";
    for (int d = 0; d < 4; ++d) {
      char buf[17];
      std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng()));
      digest += buf;
    }
    images.push_back(
        {{"names",
          {repo + "@" + digest, repo + ":v" + std::to_string(i % 7) + "." + std::to_string(i)}},
         {"sizeBytes", 200000000 + static_cast<int64_t>(rng() % 9000000000ULL)}});
  }
  return images;
}

json Node(int index, const Shape& s, std::mt19937_64& rng) {
  char name[64];
  std::snprintf(name, sizeof name, "gpu-%s-%05d", s.family, index);
  std::string gpus = std::to_string(s.gpus);
  json labels = {{"kubernetes.io/hostname", name},
                 {"kubernetes.io/os", "linux"},
                 {"kubernetes.io/arch", "amd64"},
                 {"node.kubernetes.io/instance-type", s.instance},
                 {"topology.kubernetes.io/zone",
                  "us-east-1" + std::string(1, static_cast<char>('a' + index % 4))},
                 {"topology.kubernetes.io/region", "us-east-1"},
                 {"feature.node.kubernetes.io/pci-10de.present", "true"},
                 {"feature.node.kubernetes.io/kernel-version.full", "5.15.0-126-generic"},
                 {"nvidia.com/gpu.present", "true"},
                 {"nvidia.com/gpu.product", s.product},
                 {"nvidia.com/gpu.memory", std::to_string(s.memory_mib)},
                 {"nvidia.com/gpu.count", gpus},
                 {"nvidia.com/gpu.family", s.family},
                 {"nvidia.com/gpu.compute.major", s.cc_major},
                 {"nvidia.com/gpu.compute.minor", s.cc_minor},
                 {"nvidia.com/gpu.machine", s.instance},
                 {"nvidia.com/gpu.mode", "compute"},
                 {"nvidia.com/cuda.driver-version.full", "550.127.05"},
                 {"nvidia.com/cuda.driver-version.major", "550"},
                 {"nvidia.com/cuda.driver-version.minor", "127"},
                 {"nvidia.com/cuda.driver-version.revision", "05"},
                 {"nvidia.com/cuda.driver.major", "550"},
                 {"nvidia.com/cuda.driver.minor", "127"},
                 {"nvidia.com/cuda.driver.rev", "05"},
                 {"nvidia.com/cuda.runtime-version.full", "12.4"},
                 {"nvidia.com/cuda.runtime-version.major", "12"},
                 {"nvidia.com/cuda.runtime-version.minor", "4"},
                 {"nvidia.com/cuda.runtime.major", "12"},
                 {"nvidia.com/cuda.runtime.minor", "4"},
                 {"nvidia.com/gfd.timestamp", "1763700000"},
                 {"nvidia.com/gpu-driver-upgrade-state", "upgrade-done"},
                 {"nvidia.com/mig.capable", s.mig_mixed ? "true" : "false"},
                 {"nvidia.com/mps.capable", "false"},
                 {"nvidia.com/vgpu.present", "false"}};
  for (const char* c : {"container-toolkit", "dcgm", "dcgm-exporter", "device-plugin", "driver",
                        "gpu-feature-discovery", "node-status-exporter", "operator-validator"}) {
    labels[std::string("nvidia.com/gpu.deploy.") + c] = "true";
  }
  json resources = {
      {"cpu", "96"},          {"memory", "1176488100Ki"}, {"ephemeral-storage", "965267762316"},
      {"hugepages-1Gi", "0"}, {"hugepages-2Mi", "0"},     {"pods", "737"}};
  if (s.mig_mixed) {
    labels["nvidia.com/mig.strategy"] = "mixed";
    labels["nvidia.com/mig.config"] = "all-balanced";
    labels["nvidia.com/mig.config.state"] = "success";
    labels["nvidia.com/gpu.replicas"] = "0";
    labels["nvidia.com/gpu.sharing-strategy"] = "none";
    for (auto [p, count, mem] :
         {std::tuple{"1g.5gb", 16, 4864}, {"2g.10gb", 8, 9984}, {"3g.20gb", 8, 20096}}) {
      std::string prefix = std::string("nvidia.com/mig-") + p;
      labels[prefix + ".count"] = std::to_string(count);
      labels[prefix + ".memory"] = std::to_string(mem);
      labels[prefix + ".product"] = std::string(s.product) + "-MIG-" + p;
      labels[prefix + ".replicas"] = "1";
      resources[prefix] = std::to_string(count);
    }
    resources["nvidia.com/gpu"] = "0";
  } else if (s.time_sliced) {
    labels["nvidia.com/gpu.replicas"] = "4";
    labels["nvidia.com/gpu.sharing-strategy"] = "time-slicing";
    resources["nvidia.com/gpu"] = "0";
    resources["nvidia.com/gpu.shared"] = std::to_string(s.gpus * 4);
  } else {
    labels["nvidia.com/mig.strategy"] = "single";
    labels["nvidia.com/gpu.replicas"] = "1";
    labels["nvidia.com/gpu.sharing-strategy"] = "none";
    resources["nvidia.com/gpu"] = gpus;
  }
  json conditions = json::array();
  for (auto [type, status] : {std::pair{"MemoryPressure", "False"},
                              {"DiskPressure", "False"},
                              {"PIDPressure", "False"},
                              {"Ready", "True"},
                              {"NetworkUnavailable", "False"}}) {
    conditions.push_back({{"type", type},
                          {"status", status},
                          {"lastHeartbeatTime", "2026-11-22T01:53:25Z"},
                          {"lastTransitionTime", "2026-10-01T00:00:00Z"},
                          {"reason", std::string("Kubelet") + type},
                          {"message", "kubelet is posting ready status"}});
  }
  std::string ip = "10." + std::to_string(index / 65536 % 256) + "." +
                   std::to_string(index / 256 % 256) + "." + std::to_string(index % 256);
  return {
      {"metadata",
       {{"name", name},
        {"uid", "node-" + std::to_string(index)},
        {"resourceVersion", "1"},
        {"creationTimestamp", "2026-10-01T00:00:00Z"},
        {"labels", labels},
        {"annotations",
         {{"node.alpha.kubernetes.io/ttl", "0"},
          {"volumes.kubernetes.io/controller-managed-attach-detach", "true"},
          {"nfd.node.kubernetes.io/feature-labels", "pci-10de.present,kernel-version.full"}}}}},
      {"spec",
       {{"providerID", std::string("aws:///us-east-1a/i-") + std::to_string(1000000 + index)},
        {"taints", {{{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}}}}}},
      {"status",
       {{"capacity", resources},
        {"allocatable", resources},
        {"conditions", conditions},
        {"addresses",
         {{{"type", "InternalIP"}, {"address", ip}}, {{"type", "Hostname"}, {"address", name}}}},
        {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", 10250}}}}},
        {"nodeInfo",
         {{"machineID", "ec2"},
          {"systemUUID", "ec2"},
          {"bootID", "b"},
          {"kernelVersion", "5.15.0-126-generic"},
          {"osImage", "Ubuntu 22.04.5 LTS"},
          {"containerRuntimeVersion", "containerd://1.7.22"},
          {"kubeletVersion", "v1.30.5"},
          {"kubeProxyVersion", "v1.30.5"},
          {"operatingSystem", "linux"},
          {"architecture", "amd64"}}},
        {"images", Images(rng)}}}};
}

json Pod(int index, const std::string& node, const std::string& resource, int count) {
  std::string name = "job-" + std::to_string(index / 8) + "-" + std::to_string(index % 8);
  json limits = json::object();
  json requests = {{"cpu", "4"}, {"memory", "32Gi"}};
  if (!resource.empty()) {
    limits[resource] = std::to_string(count);
    requests[resource] = std::to_string(count);
  }
  return {{"metadata",
           {{"name", name},
            {"namespace", "team-" + std::to_string(index % 40)},
            {"uid", "pod-uid-" + std::to_string(index)},
            {"resourceVersion", "1"},
            {"creationTimestamp", "2026-11-20T10:00:00Z"},
            {"labels", {{"app", "trainer"}, {"job-name", name}}},
            {"ownerReferences",
             {{{"apiVersion", "batch/v1"},
               {"kind", "Job"},
               {"name", name},
               {"uid", "owner-" + std::to_string(index)},
               {"controller", true}}}},
            {"managedFields",
             {{{"manager", "kube-controller-manager"},
               {"operation", "Update"},
               {"apiVersion", "v1"},
               {"time", "2026-11-20T10:00:00Z"},
               {"fieldsType", "FieldsV1"},
               {"fieldsV1",
                {{"f:metadata", {{"f:labels", {{".", json::object()}, {"f:app", json::object()}}}}},
                 {"f:spec", {{"f:containers", json::object()}}}}}}}}}},
          {"spec",
           {{"nodeName", node},
            {"restartPolicy", "Never"},
            {"schedulerName", "default-scheduler"},
            {"serviceAccountName", "default"},
            {"terminationGracePeriodSeconds", 30},
            {"tolerations",
             {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}},
              {{"key", "node.kubernetes.io/not-ready"},
               {"operator", "Exists"},
               {"effect", "NoExecute"},
               {"tolerationSeconds", 300}}}},
            {"containers",
             {{{"name", "main"},
               {"image", "nvcr.io/nvidia/pytorch:24.08-py3"},
               {"command", {"torchrun", "--nproc_per_node=8", "train.py"}},
               {"env", {{{"name", "NCCL_DEBUG"}, {"value", "WARN"}}}},
               {"resources", {{"limits", limits}, {"requests", requests}}},
               {"volumeMounts",
                {{{"name", "kube-api-access"},
                  {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"},
                  {"readOnly", true}}}},
               {"terminationMessagePath", "/dev/termination-log"},
               {"imagePullPolicy", "IfNotPresent"}}}}}},
          {"status",
           {{"phase", "Running"},
            {"qosClass", "Burstable"},
            {"hostIP", "10.0.0.1"},
            {"podIP", "10.244.1.1"},
            {"startTime", "2026-11-20T10:00:05Z"}}}};
}

}  // namespace

SyntheticCluster MakeSyntheticCluster(int nodes, int pods, double gpu_share, double occupancy,
                                      uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::discrete_distribution<int> pick_shape(std::begin(kShapeWeights), std::end(kShapeWeights));
  SyntheticCluster c;
  struct Slot {
    std::string node;
    std::string resource;
    int free;
  };
  std::vector<Slot> slots;
  for (int i = 0; i < nodes; ++i) {
    const Shape& s = kShapes[pick_shape(rng)];
    c.nodes.push_back(Node(i, s, rng));
    std::string name = c.nodes.back()["metadata"]["name"];
    int budget = static_cast<int>(s.gpus * occupancy + 0.5);
    if (s.mig_mixed) {
      slots.push_back({name, "nvidia.com/mig-1g.5gb", static_cast<int>(16 * occupancy)});
    } else if (s.time_sliced) {
      slots.push_back({name, "nvidia.com/gpu.shared", budget * 4});
    } else {
      slots.push_back({name, "nvidia.com/gpu", budget});
    }
  }
  int gpu_pods = static_cast<int>(pods * gpu_share);
  size_t cursor = 0;
  for (int i = 0; i < pods; ++i) {
    if (i < gpu_pods && !slots.empty()) {
      // Round-robin over nodes with GPUs left; each pod takes 1 or 2 units.
      for (size_t tries = 0; tries < slots.size() && slots[cursor].free == 0; ++tries) {
        cursor = (cursor + 1) % slots.size();
      }
      Slot& slot = slots[cursor];
      cursor = (cursor + 1) % slots.size();
      if (slot.free > 0) {
        int take = std::min(slot.free, 1 + static_cast<int>(rng() % 2));
        slot.free -= take;
        c.pods.push_back(Pod(i, slot.node, slot.resource, take));
        continue;
      }
    }
    c.pods.push_back(Pod(i, c.nodes[rng() % c.nodes.size()]["metadata"]["name"], "", 0));
  }
  return c;
}

}  // namespace gpusched::testing
