#include "gpusched/app/scheduler_config.h"

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>

#include "gpusched/cluster/cluster_snapshot.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/model/known_mig_profiles.h"

namespace gpusched {
namespace {

constexpr size_t kCommentColumn = 30;  // where the comments of a block line up

// One line of YAML, its comment (if any) lined up at kCommentColumn.
void Line(std::ostringstream& out, const std::string& text, const std::string& comment = {}) {
  out << text;
  if (!comment.empty()) {
    out << std::string(text.size() < kCommentColumn ? kCommentColumn - text.size() : 1, ' ') << "# "
        << comment;
  }
  out << '\n';
}

bool IsResourceName(const std::string& name) {
  static const std::regex kName(
      R"(([A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)");
  return name.size() <= 253 && std::regex_match(name, kName);
}

bool IsHttps(const std::string& url) { return url.starts_with("https://"); }

std::string Join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : separator) + part;
  return out;
}

// "NVIDIA-A100-SXM4-80GB" -> "A100-SXM4-80GB": the comments name products as people say them.
std::string ShortProduct(std::string_view product) {
  if (product.starts_with("NVIDIA-")) product.remove_prefix(7);
  return std::string(product);
}

std::string WhyManaged(const ManagedResource& r) {
  std::vector<std::string> why;
  if (!r.products.empty()) why.push_back(Join(r.products, ", "));
  if (r.advertising_nodes > 0) {
    why.push_back(std::to_string(r.advertising_nodes) +
                  (r.advertising_nodes == 1 ? " node advertises it" : " nodes advertise it"));
  }
  return Join(why, "; ");
}

void WriteTls(std::ostringstream& out, const SchedulerConfigSpec& spec) {
  if (spec.tls_dir.empty()) return;
  Line(out, "  enableHTTPS: true", "the scheme of urlPrefix must say https too");
  Line(out, "  tlsConfig:");
  Line(out, "    caFile: " + spec.tls_dir + "/ca.crt", "verifies gpusched's certificate");
  Line(out, "    certFile: " + spec.tls_dir + "/client.crt", "accepted by gpusched's --client-ca");
  Line(out, "    keyFile: " + spec.tls_dir + "/client.key");
}

void WriteManaged(std::ostringstream& out, const SchedulerConfigSpec& spec) {
  Line(out, "  managedResources:", "exact names, no wildcard: only pods asking for one call");
  for (const ManagedResource& r : spec.resources) {
    Line(out, "  - {name: " + r.name + ", ignoredByScheduler: false}", WhyManaged(r));
  }
}

// The entry of a registration that filters (and, for the one-entry registrations, ranks).
void WriteFilterEntry(std::ostringstream& out, const SchedulerConfigSpec& spec) {
  const bool ranks = spec.registration != Registration::kRecommended &&
                     spec.registration != Registration::kGpuPods;
  const bool every_pod = spec.registration == Registration::kAllPods;
  Line(out, "- urlPrefix: \"" + spec.url + "\"",
       "scheme included; gpusched's --listen (and --url-prefix)");
  Line(out, "  filterVerb: " + spec.filter_verb,
       spec.registration == Registration::kRecommended ? "no prioritizeVerb: the entry below ranks"
       : ranks                                         ? ""
               : "no prioritizeVerb: with filterBestOnly the filter's answer is the ranking");
  if (ranks) {
    Line(out, "  prioritizeVerb: " + spec.prioritize_verb);
    Line(out, "  weight: 5", "one point of gpusched's 0..10 score is 50 in kube-scheduler's sum");
  }
  Line(out, "  httpTimeout: 2s", "leaves room for gpusched's --not-ready-wait (1 s)");
  Line(out, "  nodeCacheCapable: true", "node names only: gpusched keeps its own inventory");
  Line(out, "  ignorable: false",
       every_pod ? "every pod waits while gpusched is down"
                 : "GPU rules stay binding: GPU pods wait while gpusched is down");
  WriteTls(out, spec);
  if (!every_pod) WriteManaged(out, spec);
}

// The recommended registration's second entry: ranks every pod, never binds one.
void WritePrioritizeEntry(std::ostringstream& out, const SchedulerConfigSpec& spec) {
  Line(out, "- urlPrefix: \"" + spec.url + "\"", "the same gpusched");
  Line(out, "  prioritizeVerb: " + spec.prioritize_verb, "no filterVerb: never called in filter");
  Line(out, "  weight: 5", "one point of gpusched's 0..10 score is 50 in kube-scheduler's sum");
  Line(out, "  httpTimeout: 1s", "what a hung gpusched costs each pod");
  Line(out, "  nodeCacheCapable: true");
  Line(out, "  ignorable: true", "no managedResources: every pod is ranked, and schedules");
  WriteTls(out, spec);
}

void WriteHead(std::ostringstream& out, const SchedulerConfigSpec& spec) {
  for (const auto& line : spec.header) out << (line.empty() ? "#" : "# " + line) << '\n';
  Line(out, "apiVersion: kubescheduler.config.k8s.io/v1");
  Line(out, "kind: KubeSchedulerConfiguration");
  if (spec.scheduler_kubeconfig) {
    Line(out, "clientConnection:");
    if (spec.scheduler_kubeconfig->empty()) {
      Line(out, "  kubeconfig: \"\"", "empty: the pod's service account");
    } else {
      Line(out, "  kubeconfig: " + *spec.scheduler_kubeconfig,
           "with a configuration file, the --kubeconfig flag is ignored");
    }
  }
  if (!spec.lease.empty()) {
    const auto slash = spec.lease.find('/');
    Line(out, "leaderElection:", "only the holder of this Lease schedules");
    Line(out, "  leaderElect: true");
    Line(out, "  resourceLock: leases");
    Line(out, "  resourceName: " + spec.lease.substr(slash + 1));
    Line(out, "  resourceNamespace: " + spec.lease.substr(0, slash));
  }
  if (!spec.scheduler_name.empty()) {
    Line(out, "profiles:");
    Line(out, "- schedulerName: " + spec.scheduler_name,
         "pods opt in with spec.schedulerName: " + spec.scheduler_name);
  }
}

}  // namespace

std::optional<Registration> ParseRegistration(const std::string& name) {
  if (name == "recommended") return Registration::kRecommended;
  if (name == "gpu-pods") return Registration::kGpuPods;
  if (name == "gpu-pods-ranked") return Registration::kGpuPodsRanked;
  if (name == "all-pods") return Registration::kAllPods;
  return std::nullopt;
}

Problems CheckSchedulerConfigSpec(const SchedulerConfigSpec& spec) {
  Problems problems;
  static const std::regex kUrl(
      R"(https?://([A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?(/[-A-Za-z0-9._~/]*)?)");
  if (!std::regex_match(spec.url, kUrl)) {
    problems.Add("--url " + spec.url + ": not http(s)://HOST[:PORT][/PATH]");
  } else if (IsHttps(spec.url) && spec.tls_dir.empty()) {
    problems.Add("--url " + spec.url +
                 ": https needs --tls-dir (kube-scheduler would not verify gpusched without a CA)");
  } else if (!IsHttps(spec.url) && !spec.tls_dir.empty()) {
    problems.Add("--tls-dir " + spec.tls_dir + " needs an https --url (is " + spec.url + ")");
  }
  static const std::regex kPath(R"(/[-A-Za-z0-9._/]*)");
  if (!spec.tls_dir.empty() && !std::regex_match(spec.tls_dir, kPath)) {
    problems.Add("--tls-dir " + spec.tls_dir + ": not an absolute path of [A-Za-z0-9._/-]");
  }
  if (spec.scheduler_kubeconfig && !spec.scheduler_kubeconfig->empty() &&
      !std::regex_match(*spec.scheduler_kubeconfig, kPath)) {
    problems.Add("--scheduler-kubeconfig " + *spec.scheduler_kubeconfig +
                 ": not an absolute path of [A-Za-z0-9._/-]");
  }
  static const std::regex kDnsLabel(R"([a-z0-9]([-a-z0-9]*[a-z0-9])?)");
  static const std::regex kLease(R"([a-z0-9]([-a-z0-9]*[a-z0-9])?/[a-z0-9]([-a-z0-9.]*[a-z0-9])?)");
  if (!spec.lease.empty() && !std::regex_match(spec.lease, kLease)) {
    problems.Add("--lease " + spec.lease + ": not NAMESPACE/NAME");
  }
  if (!spec.scheduler_name.empty() && !std::regex_match(spec.scheduler_name, kDnsLabel)) {
    problems.Add("--scheduler-name " + spec.scheduler_name + ": not a DNS label");
  }
  for (const char* verb : {"filter", "prioritize"}) {
    const std::string& value = verb[0] == 'f' ? spec.filter_verb : spec.prioritize_verb;
    if (!std::regex_match(value, kDnsLabel)) {
      problems.Add(std::string("the ") + verb + " verb " + value + ": not one path segment");
    }
  }
  for (const auto& r : spec.resources) {
    if (!IsResourceName(r.name)) problems.Add("resource " + r.name + ": not a resource name");
  }
  return problems;
}

std::string WriteSchedulerConfig(const SchedulerConfigSpec& spec) {
  std::ostringstream out;
  WriteHead(out, spec);
  Line(out, "extenders:");
  WriteFilterEntry(out, spec);
  if (spec.registration == Registration::kRecommended) WritePrioritizeEntry(out, spec);
  return out.str();
}

AdvertisedResources AdvertisedGpuResources(const ClusterSnapshot& snapshot,
                                           const GpuResourceNames& names) {
  AdvertisedResources out;
  std::set<std::string> refused;
  for (const auto& node : snapshot.nodes()) {
    std::set<std::string> seen;
    for (const auto* list : {&node->info.capacity, &node->info.allocatable}) {
      for (const auto& amount : *list) {
        if (!names.IsGpuResource(amount.name)) continue;
        if (IsResourceName(amount.name)) {
          seen.insert(amount.name);
        } else if (refused.size() < 16) {
          std::string shown = amount.name.substr(0, 80);
          for (char& c : shown) c = static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
          refused.insert(shown);
        }
      }
    }
    for (const auto& name : seen) ++out.nodes[name];
  }
  out.refused.assign(refused.begin(), refused.end());
  return out;
}

std::vector<ManagedResource> ManagedGpuResources(const std::map<std::string, int>& advertised,
                                                 const std::vector<std::string>& extra,
                                                 bool include_known) {
  std::vector<ManagedResource> out;
  auto add = [&](const std::string& name) -> ManagedResource& {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& r) { return r.name == name; });
    if (it != out.end()) return *it;
    out.push_back({name, {}, 0});
    auto seen = advertised.find(name);
    if (seen != advertised.end()) out.back().advertising_nodes = seen->second;
    return out.back();
  };
  add(std::string(kGpuResource));
  add(std::string(kSharedGpuResource));
  if (include_known) {
    for (const KnownMigProduct& product : KnownMigProducts()) {
      for (std::string_view profile : product.profiles) {
        add(std::string(kMigResourcePrefix) + std::string(profile))
            .products.push_back(ShortProduct(product.product));
      }
    }
  }
  std::set<std::string> rest;
  for (const auto& [name, nodes] : advertised) rest.insert(name);
  rest.insert(extra.begin(), extra.end());
  for (const auto& name : rest) add(name);
  return out;
}

}  // namespace gpusched
