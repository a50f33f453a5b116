// `gpusched scheduler-config`: writes the KubeSchedulerConfiguration that registers gpusched with
// kube-scheduler for the install at hand (gpusched/app/scheduler_config.h): the address that
// install gives gpusched (read from the cluster for a Service), the TLS settings that match, and
// every GPU resource the filter entry must manage: the MIG profiles NVIDIA documents, plus those
// the cluster's nodes advertise. Reads the cluster once; never writes to it.
#pragma once

#include <string>
#include <vector>

#include "gpusched/app/cluster_view.h"
#include "gpusched/app/scheduler_config.h"
#include "gpusched/cli/flags.h"

namespace gpusched {

// Where gpusched runs, which decides how kube-scheduler reaches it (docs/install.md).
enum class Install {
  kKubeadm,          // manifests/kubeadm: on each control-plane node, on its loopback
  kService,          // manifests/base: the Service's ClusterIP, plain HTTP
  kServiceTls,       // manifests/tls: the Service's ClusterIP, mutual TLS
  kSecondScheduler,  // manifests/second-scheduler: the sidecar, on the pod's loopback
};

struct SchedulerConfigCommandOptions {
  Install install = Install::kKubeadm;
  SchedulerConfigSpec spec;  // as the install and the flags say; resources not yet read
  bool url_given = false;    // else a Service install reads its address from the cluster
  std::string service;       // NAMESPACE/NAME of gpusched's Service
  enum class Resources { kKnown, kCluster, kBoth } resources = Resources::kBoth;
  ClusterViewOptions view;
  std::vector<std::string> args;  // as given, for the configuration's first comment

  static FlagSet Flags();
  // The options `flags` give, with every problem found in them; reads no file.
  static Validated<SchedulerConfigCommandOptions> FromFlags(const FlagSet& flags,
                                                            std::vector<std::string> args);
};

// The configuration `options` describe when no cluster is read: the known MIG profiles only, the
// URL as given. What the manifests' examples are, and what tests regenerate them with.
Validated<std::string> SchedulerConfigWithoutCluster(const SchedulerConfigCommandOptions& options);

// Runs the command on its arguments (after the command name); returns the exit code: 0 with the
// configuration on stdout, 2 for bad flags or a cluster that cannot be read.
int RunSchedulerConfigCommand(const std::vector<std::string>& args);

}  // namespace gpusched
