// AssumptionSink: where the extender reports the node it expects kube-scheduler to bind a pod to,
// before any watch can say so. kube-scheduler asks about the next pod of a burst while the last
// one is still being bound; an inventory that counts the expected placement at once judges the
// next pod against the cluster as it is about to be (ClusterLedger::Assume).
//
// Implementations are called from request threads and must be thread-safe and quick.
#pragma once

#include <string_view>

#include "gpusched/model/pod.h"

namespace gpusched {

class AssumptionSink {
 public:
  virtual ~AssumptionSink() = default;
  virtual void Assume(const PodInfo& pod, std::string_view node) = 0;
  // kube-scheduler is judging `pod` again: the cycle its assumption stood for has failed.
  virtual void Forget(const PodInfo& pod) = 0;
};

}  // namespace gpusched
