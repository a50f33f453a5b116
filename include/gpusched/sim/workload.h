// Workload preparation for the packing simulator, as FGD's experiments do it (USENIX ATC'23 and
// its simulator): the trace sorted by pod name, shuffled with the seed, then "tuned" to `tune`
// times the cluster's GPU capacity. Pods never leave; the tuned list arrives one pod at a time.
// Or, in trace order (a replay of the trace as created, issue #29): the pods in the file's order,
// up to and including the one whose GPU request reaches `tune` times the capacity; no shuffle, no
// clones (a shorter trace ends early), and the seed is not used.
//
// Tuning up appends copies of pods drawn at random (with replacement) from the name-sorted trace,
// until a drawn pod would take the total past the target; that pod is dropped. As in the paper's
// simulator, the check adds the pod's per-GPU share (not its whole request), so a multi-GPU draw
// may overshoot the target by a few GPUs, and CPU-only draws are always appended. Tuning down (a
// trace above the target) removes random pods, keeping the order. Deterministic for a seed.
// A trace with multi-pod jobs (TracePod::group) is prepared in units: a job's members stay
// together and in order, and a job is shuffled, drawn (whole request against the target), cloned
// (as a new job), cut or removed whole.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "gpusched/sim/openb_trace.h"

namespace gpusched {

// The simulator's random source: a seeded 64-bit Mersenne Twister with an unbiased bounded draw
// of our own (the standard distributions differ between library implementations).
class SimRandom {
 public:
  explicit SimRandom(uint64_t seed) : engine_(seed) {}
  // Uniform in [0, n); n > 0.
  uint64_t Below(uint64_t n);

 private:
  std::mt19937_64 engine_;
};

// The order pods arrive in.
enum class ArrivalOrder {
  kShuffle,  // FGD's: sorted by name, shuffled with the seed, tuned with clones
  kTrace,    // the file's order (openb lists are in creation order), cut at the target
};

// The most pods a prepared workload holds: tuning adds no clone past it. The openb traces prepare
// 7,500 to 13,600; a trace whose pods ask for a sliver of GPU each on a large cluster would
// otherwise clone without bound (each run holds its own list, a few hundred bytes a pod).
inline constexpr size_t kMaxPreparedPods = 1'000'000;

struct WorkloadOptions {
  double tune = 1.3;  // target total GPU request as a multiple of cluster capacity
  ArrivalOrder order = ArrivalOrder::kShuffle;
  size_t max_pods = kMaxPreparedPods;  // tuning up adds no clone past this many pods
};

// The arrival order for one run. `capacity_gpu_milli` is the cluster's GPU capacity.
std::vector<TracePod> PrepareWorkload(std::vector<TracePod> trace, int64_t capacity_gpu_milli,
                                      SimRandom& random, WorkloadOptions options = {});

// How many pods PrepareWorkload makes of `trace`, on average over seeds: the trace and the
// clones that tuning up draws, each draw taking the trace's mean step towards the target. A
// caller refuses a trace above kMaxPreparedPods before any run rather than measure a cut one.
double ExpectedPreparedPods(const std::vector<TracePod>& trace, int64_t capacity_gpu_milli,
                            WorkloadOptions options = {});

}  // namespace gpusched
