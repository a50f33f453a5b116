// ResolvedPod: a pod whose demand is resolved before it is judged. Its requests say everything it
// asks for, whatever asked for it (device-plugin requests, or what the layer that knows another
// way of asking translated into requests), or it carries why gpusched does not model what it
// asks. The engine judges resolved pods only and never asks how they were resolved; a pod that
// asks only through its requests is its own resolution.
//
// Holds the pod it was made from by reference, or a rebuilt pod it shares; copying it shares the
// rebuilt pod. Value type; not synchronized.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "gpusched/model/pod.h"

namespace gpusched {

class ResolvedPod {
 public:
  // A pod whose requests already say its whole demand, borrowed: it must outlive this.
  ResolvedPod(const PodInfo& pod) : pod_(&pod) {}  // NOLINT(google-explicit-constructor)
  // The pod rebuilt with its demand in its requests, kept.
  explicit ResolvedPod(std::shared_ptr<const PodInfo> rebuilt)
      : rebuilt_(std::move(rebuilt)), pod_(rebuilt_.get()) {}
  // `pod` as it is, with what it asks beyond its requests not modelled, for `reason` (not empty).
  static ResolvedPod Unmodelled(const PodInfo& pod, std::string reason) {
    ResolvedPod out(pod);
    out.unmodelled_ = std::move(reason);
    return out;
  }

  const PodInfo& pod() const { return *pod_; }
  // The rebuilt pod; null when the pod is borrowed.
  const std::shared_ptr<const PodInfo>& rebuilt() const { return rebuilt_; }
  // Why part of the pod's demand is not modelled; empty when all of it is.
  const std::string& unmodelled() const { return unmodelled_; }

 private:
  std::shared_ptr<const PodInfo> rebuilt_;
  const PodInfo* pod_;
  std::string unmodelled_;
};

}  // namespace gpusched
