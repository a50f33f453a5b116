// The openb GPU cluster trace (Alibaba cluster-trace-gpu-v2023, used by FGD, USENIX ATC'23): its
// node and pod CSV files read into plain values for the packing simulator.
//
// Columns are found by header name, so the five-column multigpu files and the full eleven-column
// files both read; columns the simulator does not use are ignored. Node names are required and
// unique; values are bounded (kMaxTraceCpuMilli, kMaxTraceMemoryMib, 64 GPUs). A malformed file
// raises TraceError with "FILE:LINE: column: problem" (the file's bytes quoted, so the message
// stays one printable line), an unreadable one FileError (both InputErrors). Pure functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/util/input_error.h"

namespace gpusched {

class TraceError : public InputError {
 public:
  using InputError::InputError;
};

// Bytes in a MiB: trace memory is in MiB, Kubernetes quantities in bytes.
inline constexpr int64_t kBytesPerMib = int64_t{1} << 20;

// The most CPU and memory a trace node or pod may state (about a billion cores, 1 PiB), for the
// openb lists and scenarios alike: the simulator keeps them in milli-units (memory in milli-bytes)
// and adds a node's usage to a request, which must stay within int64.
inline constexpr int64_t kMaxTraceCpuMilli = int64_t{1} << 40;
inline constexpr int64_t kMaxTraceMemoryMib = int64_t{1} << 30;

// Other extended resources, in units (scenarios only: MIG slices, for one).
using ExtraResources = std::vector<std::pair<std::string, int64_t>>;

struct TraceNode {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t gpus = 0;
  std::string model;                                        // empty for CPU-only nodes
  std::vector<std::pair<std::string, std::string>> labels;  // GFD labels (scenarios)
  ExtraResources resources;

  // GPU capacity in milli-GPU: whole devices plus MIG slices.
  int64_t gpu_capacity_milli() const;
};

// The GPU capacity of a cluster of `nodes`, in milli-GPU: what the workload is tuned against.
int64_t GpuCapacityMilli(const std::vector<TraceNode>& nodes);

struct TracePod {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t num_gpu = 0;
  int64_t gpu_milli = 0;              // per GPU; below 1000 only for a single shared GPU
  std::vector<std::string> gpu_spec;  // allowed models; empty: any
  ExtraResources resources;
  // A member of a multi-pod job (scenarios' `job`): the job's name, its stated size (0: not
  // stated, an open-ended group) and how many pods it has in the trace.
  std::string group;
  int32_t group_size = 0;
  int32_t group_pods = 0;

  // The pod's whole GPU request in milli-GPU: num_gpu x gpu_milli, plus MIG slices.
  int64_t gpu_request_milli() const;
};

// `source` names the text in errors.
std::vector<TraceNode> ParseOpenbNodes(std::string_view csv, const std::string& source);
std::vector<TracePod> ParseOpenbPods(std::string_view csv, const std::string& source);
std::vector<TraceNode> LoadOpenbNodes(const std::string& path);
std::vector<TracePod> LoadOpenbPods(const std::string& path);

}  // namespace gpusched
