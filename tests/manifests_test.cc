// Longer than 500 lines: one test per shipped manifest and scheduler configuration, read together.
// manifests/ must deploy what the server actually is: least-privilege RBAC, probes on routes the
// server serves, flags the binary accepts, and scheduler configurations whose urlPrefix, port and
// verbs match the server's routes. That every kustomization renders and passes a real API
// server's dry run is tests/e2e/manifests_kustomize_test.sh.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <yaml-cpp/yaml.h>

#include "gpusched/kube/live_inventory.h"
#include "gpusched/model/gpu_facts.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/policy/policy.h"
#include "gpusched/policy/policy_watcher.h"
#include "gpusched/server/http_server.h"
#include "testing/test_support.h"

namespace gpusched::manifests_test {
namespace {

namespace fs = std::filesystem;
const fs::path kManifests = fs::path(GPUSCHED_SOURCE_DIR) / "manifests";
const fs::path kBase = kManifests / "base";

std::vector<YAML::Node> Docs(const std::string& base_file) {
  return YAML::LoadAllFromFile((kBase / base_file).string());
}

YAML::Node Kind(const std::string& file, const std::string& kind) {
  for (const auto& d : Docs(file)) {
    if (d["kind"].as<std::string>() == kind) return d;
  }
  ADD_FAILURE() << file << " has no " << kind;
  return YAML::Node();
}

std::set<std::string> Strings(const YAML::Node& seq) {
  std::set<std::string> out;
  for (const auto& s : seq) out.insert(s.as<std::string>());
  return out;
}

TEST(Manifests, every_file_parses_and_kustomization_lists_them_all) {
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(kBase)) {
    if (e.path().extension() == ".yaml" && e.path().filename() != "kustomization.yaml") {
      files.insert(e.path().filename().string());
    }
    if (e.path().extension() == ".yaml") {
      EXPECT_NO_THROW(Docs(e.path().filename().string())) << e.path();
    }
  }
  for (const auto& e : fs::directory_iterator(kManifests / "scheduler-config")) {
    EXPECT_NO_THROW(YAML::LoadAllFromFile(e.path().string())) << e.path();
  }
  YAML::Node k = YAML::LoadFile((kBase / "kustomization.yaml").string());
  EXPECT_EQ(Strings(k["resources"]), files);
}

// The live inventory lists and watches what states pod group sizes (kube/live_inventory.h):
// rules `first`.. of `rules`.
void ExpectGroupSizeRules(const YAML::Node& rules, size_t first) {
  const std::set<std::string> read = {"get", "list", "watch"};
  YAML::Node jobs = rules[first];
  EXPECT_EQ(Strings(jobs["apiGroups"]), (std::set<std::string>{"batch"}));
  EXPECT_EQ(Strings(jobs["resources"]), (std::set<std::string>{"jobs"}));
  EXPECT_EQ(Strings(jobs["verbs"]), read);
  YAML::Node pod_groups = rules[first + 1];
  EXPECT_EQ(Strings(pod_groups["apiGroups"]),
            (std::set<std::string>{"scheduling.k8s.io", "scheduling.volcano.sh",
                                   "scheduling.run.ai", "scheduling.x-k8s.io"}));
  EXPECT_EQ(Strings(pod_groups["resources"]), (std::set<std::string>{"podgroups"}));
  EXPECT_EQ(Strings(pod_groups["verbs"]), read);
  YAML::Node workloads = rules[first + 2];
  EXPECT_EQ(Strings(workloads["apiGroups"]), (std::set<std::string>{"scheduling.k8s.io"}));
  EXPECT_EQ(Strings(workloads["resources"]), (std::set<std::string>{"workloads"}));
  EXPECT_EQ(Strings(workloads["verbs"]), read);
}

TEST(Manifests, rbac_grants_reading_nodes_pods_dra_and_group_objects_and_listing_budgets_only) {
  YAML::Node role = Kind("rbac.yaml", "ClusterRole");
  ASSERT_EQ(role["rules"].size(), 6u);
  YAML::Node rule = role["rules"][0];
  EXPECT_EQ(Strings(rule["apiGroups"]), (std::set<std::string>{""}));
  EXPECT_EQ(Strings(rule["resources"]), (std::set<std::string>{"nodes", "pods"}));
  EXPECT_EQ(Strings(rule["verbs"]), (std::set<std::string>{"get", "list", "watch"}));
  // gpusched defrag-plan lists PodDisruptionBudgets once (gpusched/kube/budget_list.h).
  YAML::Node budgets = role["rules"][1];
  EXPECT_EQ(Strings(budgets["apiGroups"]), (std::set<std::string>{"policy"}));
  EXPECT_EQ(Strings(budgets["resources"]), (std::set<std::string>{"poddisruptionbudgets"}));
  EXPECT_EQ(Strings(budgets["verbs"]), (std::set<std::string>{"list"}));
  // The DRA inventory (gpusched/kube/live_inventory.h) lists and watches what DRA publishes.
  YAML::Node dra = role["rules"][2];
  EXPECT_EQ(Strings(dra["apiGroups"]), (std::set<std::string>{"resource.k8s.io"}));
  EXPECT_EQ(Strings(dra["resources"]),
            (std::set<std::string>{"resourceslices", "resourceclaims", "deviceclasses"}));
  EXPECT_EQ(Strings(dra["verbs"]), (std::set<std::string>{"get", "list", "watch"}));
  ExpectGroupSizeRules(role["rules"], 3);
  YAML::Node binding = Kind("rbac.yaml", "ClusterRoleBinding");
  EXPECT_EQ(binding["subjects"][0]["name"].as<std::string>(), "gpusched");
}

// The second scheduler's account reads, beyond system:kube-scheduler, exactly what states group
// sizes.
TEST(Manifests, second_scheduler_reads_the_objects_stating_group_sizes_and_nothing_more) {
  std::optional<YAML::Node> role;
  std::optional<YAML::Node> binding;
  for (const auto& d :
       YAML::LoadAllFromFile((kManifests / "second-scheduler" / "rbac.yaml").string())) {
    std::string kind = d["kind"].as<std::string>();
    std::string name = d["metadata"]["name"].as<std::string>();
    if (kind == "ClusterRole") {
      EXPECT_FALSE(role) << "a second ClusterRole: " << name;
      role = d;
    }
    if (kind == "ClusterRoleBinding" && d["roleRef"]["name"].as<std::string>() == name) {
      binding = d;
    }
  }
  ASSERT_TRUE(role && binding);
  ASSERT_EQ((*role)["rules"].size(), 3u);
  ExpectGroupSizeRules((*role)["rules"], 0);
  EXPECT_EQ((*binding)["subjects"][0]["name"].as<std::string>(), "gpusched-scheduler");
}

// The serve flags of a container's args, checked against `gpusched serve --help`; returns
// flag -> value.
std::map<std::string, std::string> ServeArgs(const YAML::Node& container) {
  std::string help;
  FILE* p = ::popen((std::string(GPUSCHED_BINARY) + " serve --help").c_str(), "r");
  char buf[4096];
  while (p && std::fread(buf, 1, 1, p) == 1) help.push_back(buf[0]);
  if (p) ::pclose(p);
  std::map<std::string, std::string> out;
  EXPECT_EQ(container["args"][0].as<std::string>(), "serve");
  for (size_t i = 1; i < container["args"].size(); ++i) {
    std::string arg = container["args"][i].as<std::string>();
    size_t eq = arg.find('=');
    std::string flag = arg.substr(0, eq);
    EXPECT_NE(help.find("  " + flag + " "), std::string::npos) << flag << " is not a serve flag";
    out[flag] = eq == std::string::npos ? "" : arg.substr(eq + 1);
  }
  return out;
}

int PortOf(const std::string& host_port) {
  return std::stoi(host_port.substr(host_port.rfind(':') + 1));
}

TEST(Manifests, deployment_is_locked_down_and_probes_routes_the_server_serves) {
  YAML::Node pod = Kind("deployment.yaml", "Deployment")["spec"]["template"]["spec"];
  YAML::Node c = pod["containers"][0];
  EXPECT_TRUE(pod["securityContext"]["runAsNonRoot"].as<bool>());
  EXPECT_TRUE(c["securityContext"]["readOnlyRootFilesystem"].as<bool>());
  EXPECT_FALSE(c["securityContext"]["allowPrivilegeEscalation"].as<bool>());
  EXPECT_EQ(Strings(c["securityContext"]["capabilities"]["drop"]), (std::set<std::string>{"ALL"}));
  EXPECT_TRUE(c["resources"]["requests"]["cpu"] && c["resources"]["limits"]["memory"]);
  EXPECT_EQ(c["ports"][0]["containerPort"].as<int>(), 8888);

  // Probes go to the operations listener (issue #25: the verb port's load must not fail them),
  // and its paths answer (not 404) on a real operations-only server.
  std::map<std::string, int> ports;
  for (const auto& p : c["ports"])
    ports[p["name"].as<std::string>()] = p["containerPort"].as<int>();
  EXPECT_EQ(ports["ops"], PortOf(ServeArgs(c)["--ops-listen"]));
  ServerOptions ops = testing::SampleServer::AnyPort();
  ops.serve_verbs = false;
  testing::SampleServer server(ops);
  httplib::Client client("127.0.0.1", server.port());
  for (const char* probe : {"livenessProbe", "readinessProbe"}) {
    EXPECT_EQ(c[probe]["httpGet"]["port"].as<std::string>(), "ops") << probe;
    std::string path = c[probe]["httpGet"]["path"].as<std::string>();
    auto res = client.Get(path.c_str());
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 200) << probe << " " << path;
  }
}

// Issue #25: anyone who reached the port could take GPUs away with made-up pods. Only
// kube-scheduler's pods may reach the verbs; the operations port stays open.
TEST(Manifests, network_policy_admits_only_schedulers_to_the_verb_port) {
  YAML::Node np = Kind("networkpolicy.yaml", "NetworkPolicy");
  YAML::Node d = Kind("deployment.yaml", "Deployment");
  EXPECT_EQ(np["spec"]["podSelector"]["matchLabels"]["app.kubernetes.io/name"].as<std::string>(),
            d["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"].as<std::string>());
  auto args = ServeArgs(d["spec"]["template"]["spec"]["containers"][0]);
  int verbs = PortOf(args["--listen"]);
  int ops = PortOf(args["--ops-listen"]);
  bool verbs_restricted = false;
  bool ops_open = false;
  for (const auto& rule : np["spec"]["ingress"]) {
    for (const auto& p : rule["ports"]) {
      if (p["port"].as<int>() == verbs) {
        ASSERT_TRUE(rule["from"]) << "the verb port must name who may connect";
        for (const auto& peer : rule["from"]) {
          EXPECT_FALSE(peer["ipBlock"]) << "no address range by default";
          EXPECT_TRUE(peer["podSelector"]) << "only scheduler pods";
        }
        verbs_restricted = true;
      }
      if (p["port"].as<int>() == ops) ops_open = !rule["from"];
    }
  }
  EXPECT_TRUE(verbs_restricted);
  EXPECT_TRUE(ops_open);
}

// Issue #37: /capacity and /why-pending name the cluster's pods and namespaces. Every shipped
// gpusched container serves them on its loopback alone (read through kubectl port-forward, as
// RBAC allows), never on the ops port that probes and Prometheus reach.
TEST(Manifests, reports_listen_on_the_pods_loopback_only) {
  std::vector<YAML::Node> containers = {
      Kind("deployment.yaml", "Deployment")["spec"]["template"]["spec"]["containers"][0],
      YAML::LoadFile((kManifests / "tls" / "deployment-patch.yaml")
                         .string())["spec"]["template"]["spec"]["containers"][0]};
  YAML::Node second = YAML::LoadFile(
      (kManifests / "second-scheduler" / "deployment.yaml").string())["spec"]["template"]["spec"];
  for (const auto& c : second["containers"]) {
    if (c["name"].as<std::string>() == "gpusched") containers.push_back(c);
  }
  ASSERT_EQ(containers.size(), 3u);
  for (const auto& c : containers) {
    auto args = ServeArgs(c);
    ASSERT_TRUE(args.count("--ops-listen"));
    ASSERT_TRUE(args.count("--reports-listen")) << "the reports would be on the ops port";
    EXPECT_TRUE(args["--reports-listen"].starts_with("127.0.0.1:")) << args["--reports-listen"];
    EXPECT_NE(PortOf(args["--reports-listen"]), PortOf(args["--ops-listen"]));
  }
}

// Every object of a setup's own files (the kustomization's resources that are files).
std::vector<YAML::Node> SetupObjects(const fs::path& dir) {
  std::vector<YAML::Node> out;
  for (const auto& r : YAML::LoadFile((dir / "kustomization.yaml").string())["resources"]) {
    fs::path file = dir / r.as<std::string>();
    if (!fs::is_regular_file(file)) continue;
    for (const auto& d : YAML::LoadAllFromFile(file.string())) out.push_back(d);
  }
  return out;
}

std::optional<YAML::Node> Named(const std::vector<YAML::Node>& objects, const std::string& kind,
                                const std::string& name = "") {
  for (const auto& d : objects) {
    if (d["kind"].as<std::string>() == kind &&
        (name.empty() || d["metadata"]["name"].as<std::string>() == name))
      return d;
  }
  return std::nullopt;
}

// The Deployments' defaults (docs/operations.md, "Replicas, spread and priority"): two replicas
// spread over nodes where there are several, an upgrade that starts a new replica before it stops
// an old one, and a PriorityClass above every workload, below the system classes, of the setup's
// own: PriorityClasses are cluster-scoped, and deleting one setup must leave the other's.
TEST(Manifests, deployments_spread_two_replicas_upgrade_without_gaps_and_outrank_workloads) {
  std::set<std::string> classes;
  for (const char* setup : {"base", "second-scheduler"}) {
    std::vector<YAML::Node> objects = SetupObjects(kManifests / setup);
    auto d = Named(objects, "Deployment");
    ASSERT_TRUE(d) << setup;
    YAML::Node spec = (*d)["spec"];
    EXPECT_EQ(spec["replicas"].as<int>(), 2) << setup;
    EXPECT_EQ(spec["strategy"]["type"].as<std::string>(), "RollingUpdate") << setup;
    EXPECT_EQ(spec["strategy"]["rollingUpdate"]["maxUnavailable"].as<int>(), 0) << setup;
    EXPECT_EQ(spec["strategy"]["rollingUpdate"]["maxSurge"].as<int>(), 1) << setup;
    YAML::Node pod = spec["template"]["spec"];
    std::string name_label = "app.kubernetes.io/name";
    std::string app = spec["template"]["metadata"]["labels"][name_label].as<std::string>();
    YAML::Node spread = pod["affinity"]["podAntiAffinity"];
    EXPECT_FALSE(spread["requiredDuringSchedulingIgnoredDuringExecution"])
        << setup << ": required anti-affinity would leave a one-node cluster one replica";
    ASSERT_EQ(spread["preferredDuringSchedulingIgnoredDuringExecution"].size(), 1u) << setup;
    YAML::Node term = spread["preferredDuringSchedulingIgnoredDuringExecution"][0];
    EXPECT_EQ(term["podAffinityTerm"]["topologyKey"].as<std::string>(), "kubernetes.io/hostname");
    EXPECT_EQ(term["podAffinityTerm"]["labelSelector"]["matchLabels"][name_label].as<std::string>(),
              app)
        << setup;
    std::string class_name = pod["priorityClassName"].as<std::string>();
    auto pc = Named(objects, "PriorityClass", class_name);
    ASSERT_TRUE(pc) << setup << " does not ship its PriorityClass " << class_name;
    EXPECT_FALSE(class_name.starts_with("system-")) << class_name;
    // 1000000000: the highest value outside the system classes (2000000000 and up), which the API
    // server refuses to any other class.
    EXPECT_EQ((*pc)["value"].as<int64_t>(), 1000000000) << class_name;
    EXPECT_FALSE((*pc)["globalDefault"].as<bool>()) << class_name;
    EXPECT_TRUE(classes.insert(class_name).second) << "both setups ship " << class_name;
    // One replica at least through drains, the same pods.
    auto pdb = Named(objects, "PodDisruptionBudget");
    ASSERT_TRUE(pdb) << setup;
    EXPECT_EQ((*pdb)["spec"]["minAvailable"].as<int>(), 1) << setup;
    EXPECT_EQ((*pdb)["spec"]["selector"]["matchLabels"][name_label].as<std::string>(), app);
  }
}

// kube-scheduler calls the README's registration through two entries, each an HTTP client of its
// own: ClientIP affinity sends both to one replica, whose assumed placements then cover the whole
// burst. It must outlast an assumption (--assume-ttl), or calls could move while one still counts.
TEST(Manifests, service_keeps_one_schedulers_calls_on_one_replica) {
  YAML::Node svc = Kind("service.yaml", "Service");
  YAML::Node d = Kind("deployment.yaml", "Deployment");
  EXPECT_EQ(svc["spec"]["selector"]["app.kubernetes.io/name"].as<std::string>(),
            d["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"].as<std::string>());
  EXPECT_EQ(svc["spec"]["sessionAffinity"].as<std::string>(), "ClientIP");
  int64_t affinity =
      svc["spec"]["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"].as<int64_t>();
  auto assume_ttl =
      std::chrono::duration_cast<std::chrono::seconds>(LiveInventoryOptions{}.assume_ttl).count();
  EXPECT_GT(affinity, 10 * assume_ttl);
  auto args = ServeArgs(d["spec"]["template"]["spec"]["containers"][0]);
  EXPECT_FALSE(args.count("--assume-ttl")) << "the comparison above assumes the default";
}

// The image every shipped gpusched container runs is the release the tree builds
// (docs/releases.md): project(VERSION) in CMakeLists.txt, which `gpusched version` prints.
TEST(Manifests, gpusched_image_is_pinned_to_the_project_version) {
  const std::string repository = "ghcr.io/gpusched/gpusched";
  int pinned = 0;
  for (const auto& e : fs::recursive_directory_iterator(kManifests)) {
    if (e.path().extension() != ".yaml") continue;
    for (const auto& d : YAML::LoadAllFromFile(e.path().string())) {
      if (!d.IsMap() || !d["spec"] || !d["spec"]["template"]) continue;  // not a pod template
      const YAML::Node pod = d["spec"]["template"]["spec"];
      if (!pod || !pod["containers"]) continue;
      for (const auto& c : pod["containers"]) {
        if (!c["image"]) continue;
        std::string image = c["image"].as<std::string>();
        if (!image.starts_with(repository + ":") && !image.starts_with(repository + "@")) continue;
        EXPECT_EQ(image, repository + ":" + GPUSCHED_VERSION) << e.path();
        ++pinned;
      }
    }
  }
  EXPECT_GE(pinned, 2) << "manifests/base and manifests/second-scheduler";
}

TEST(Manifests, deployment_args_are_flags_gpusched_serve_accepts) {
  YAML::Node c = Kind("deployment.yaml", "Deployment")["spec"]["template"]["spec"]["containers"][0];
  std::string help;
  FILE* p = ::popen((std::string(GPUSCHED_BINARY) + " serve --help").c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) help.append(buf, n);
  ::pclose(p);
  ASSERT_EQ(c["args"][0].as<std::string>(), "serve");
  for (size_t i = 1; i < c["args"].size(); ++i) {
    std::string arg = c["args"][i].as<std::string>();
    std::string flag = arg.substr(0, arg.find('='));
    EXPECT_NE(help.find(flag + " "), std::string::npos) << flag << " is not a serve flag";
  }
  // The policy the Deployment mounts is valid: the component manifests/policy makes the
  // ConfigMap it names from policy.yaml.
  YAML::Node component = YAML::LoadFile((kManifests / "policy" / "kustomization.yaml").string());
  EXPECT_EQ(component["kind"].as<std::string>(), "Component");
  YAML::Node generator = component["configMapGenerator"][0];
  bool mounted = false;
  for (const auto& v :
       Kind("deployment.yaml", "Deployment")["spec"]["template"]["spec"]["volumes"]) {
    if (v["configMap"])
      mounted = v["configMap"]["name"].as<std::string>() == generator["name"].as<std::string>();
  }
  EXPECT_TRUE(mounted) << "the Deployment does not mount " << generator["name"];
  EXPECT_EQ(generator["files"][0].as<std::string>(), "policy.yaml");
  auto loaded = LoadPolicy((kManifests / "policy" / "policy.yaml").string());
  ASSERT_TRUE(loaded.ok()) << loaded.problems.lines()[0];
  // The README's registration relies on it: a GPU pod gets one node back from the filter, so
  // kube-scheduler calls nothing else for it (tests/e2e run gpusched with this policy).
  EXPECT_TRUE(loaded.value->spec().filter_best_only);
}

const fs::path kRecommended = kManifests / "scheduler-config" / "extender-recommended.yaml";

// Every key of an extender entry but urlPrefix, as YAML text: two entries agree when these do.
std::map<std::string, std::string> WithoutAddress(const YAML::Node& extender) {
  std::map<std::string, std::string> out;
  for (const auto& kv : extender) {
    std::string key = kv.first.as<std::string>();
    if (key != "urlPrefix") out[key] = YAML::Dump(kv.second);
  }
  return out;
}

// The names of an entry's managedResources, each kept counted by kube-scheduler too
// (ignoredByScheduler: false, so its preemption dry run sees GPU-holding victims) and listed once
// (kube-scheduler refuses a name listed twice across its extenders).
std::set<std::string> Managed(const YAML::Node& extender, const std::string& where) {
  std::set<std::string> names;
  for (const auto& r : extender["managedResources"]) {
    std::string name = r["name"].as<std::string>();
    EXPECT_TRUE(names.insert(name).second) << where << ": " << name << " listed twice";
    EXPECT_FALSE(r["ignoredByScheduler"].as<bool>()) << where << ": " << name;
  }
  return names;
}

// What the README tells operators to register is what the command writes with no flag, which
// extender-recommended.yaml is (tests/scheduler_config_test.cc checks the file is its output), and
// no registration the docs show by hand can drift from it: every YAML block of README.md and
// docs/*.md with an `extenders:` list must have the recommended file's entries, but for the
// address.
TEST(Manifests, the_registration_the_docs_show_is_the_commands) {
  const std::string readme = testing::ReadFile((kManifests.parent_path() / "README.md").string());
  EXPECT_NE(readme.find("gpusched scheduler-config"), std::string::npos);
  EXPECT_NE(readme.find("extender-recommended.yaml"), std::string::npos);
  EXPECT_NE(readme.find("filterBestOnly: true"), std::string::npos);
  // No kube-scheduler flag from 1.29 on (the backoff queue retries a pod whose cycle failed on an
  // error).
  EXPECT_EQ(readme.find("--pod-max-in-unschedulable-pods-duration="), std::string::npos);
  const std::string recommended = testing::ReadFile(kRecommended.string());
  EXPECT_NE(recommended.find("#   gpusched scheduler-config\n"), std::string::npos)
      << "extender-recommended.yaml is not what the command writes without flags";
  YAML::Node shipped = YAML::Load(recommended)["extenders"];
  std::vector<fs::path> docs = {kManifests.parent_path() / "README.md"};
  for (const auto& entry : fs::directory_iterator(kManifests.parent_path() / "docs")) {
    if (entry.path().extension() == ".md") docs.push_back(entry.path());
  }
  for (const auto& doc : docs) {
    const std::string text = testing::ReadFile(doc.string());
    for (size_t begin = text.find("```yaml\n"); begin != std::string::npos;
         begin = text.find("```yaml\n", begin + 1)) {
      const size_t end = text.find("```", begin + 8);
      const std::string block = text.substr(begin + 8, end - begin - 8);
      if (block.find("\nextenders:") == std::string::npos && !block.starts_with("extenders:")) {
        continue;
      }
      YAML::Node extenders = YAML::Load(block)["extenders"];
      ASSERT_EQ(extenders.size(), shipped.size()) << doc;
      for (size_t i = 0; i < shipped.size(); ++i) {
        EXPECT_EQ(WithoutAddress(extenders[i]), WithoutAddress(shipped[i]))
            << doc << " entry " << i;
      }
    }
  }
}

// One gpusched at two entries: the filter entry binds the pods that ask for a GPU resource
// (managedResources, ignorable: false); the prioritize entry ranks every pod, and its failure never
// fails a scheduling cycle, so pods asking for no GPU schedule while gpusched is down.
TEST(Manifests, recommended_configuration_filters_gpu_pods_and_ranks_every_pod) {
  ServerOptions defaults;
  YAML::Node cfg = YAML::LoadFile(kRecommended.string());
  EXPECT_EQ(cfg["apiVersion"].as<std::string>(), "kubescheduler.config.k8s.io/v1");
  ASSERT_EQ(cfg["extenders"].size(), 2u);
  YAML::Node filter = cfg["extenders"][0];
  YAML::Node rank = cfg["extenders"][1];
  std::string url = filter["urlPrefix"].as<std::string>();
  EXPECT_TRUE(url.starts_with("http://")) << url;
  EXPECT_TRUE(url.ends_with(":" + std::to_string(defaults.port))) << url;  // no path: verbs at /
  EXPECT_EQ(rank["urlPrefix"].as<std::string>(), url);

  EXPECT_EQ(filter["filterVerb"].as<std::string>(), defaults.filter_verb);
  EXPECT_FALSE(filter["prioritizeVerb"]);
  EXPECT_FALSE(filter["ignorable"].as<bool>());
  EXPECT_TRUE(filter["nodeCacheCapable"].as<bool>());
  std::set<std::string> managed = Managed(filter, "filter entry");
  EXPECT_TRUE(managed.count(std::string(kGpuResource)));
  EXPECT_TRUE(managed.count(std::string(kSharedGpuResource)));
  GpuResourceNames gpu_names;
  for (const auto& name : managed) {
    EXPECT_TRUE(gpu_names.IsGpuResource(name)) << name << " is not a GPU resource to gpusched";
    if (name != kGpuResource && name != kSharedGpuResource) {
      EXPECT_TRUE(IsMigSliceResource(name)) << name << " is not a MIG profile's resource";
    }
  }

  EXPECT_EQ(rank["prioritizeVerb"].as<std::string>(), defaults.prioritize_verb);
  EXPECT_FALSE(rank["filterVerb"]);
  EXPECT_FALSE(rank["managedResources"]);  // every pod is ranked
  EXPECT_TRUE(rank["ignorable"].as<bool>());
  EXPECT_TRUE(rank["nodeCacheCapable"].as<bool>());
  EXPECT_GT(rank["weight"].as<int>(), 0);
}

// Issue #51: a pod asking only for a MIG resource the filter entry does not list skips gpusched's
// filter. Every resource the MIG reference lists (NVIDIA's documented profiles, A30 to B200, +me
// included) is managed by the recommended registration, and so by every file equal to it.
// The reference is ../shared/reference (GPUSCHED_SHARED_DIR overrides); skipped without it.
TEST(Manifests, the_filter_entry_manages_every_mig_profile_nvidia_documents) {
  const char* shared = std::getenv("GPUSCHED_SHARED_DIR");
  fs::path reference =
      (shared != nullptr ? fs::path(shared) : kManifests.parent_path().parent_path() / "shared") /
      "reference" / "mig-profiles.yaml";
  if (!fs::exists(reference)) GTEST_SKIP() << "no MIG reference at " << reference;
  std::set<std::string> managed =
      Managed(YAML::LoadFile(kRecommended.string())["extenders"][0], "extender-recommended.yaml");
  size_t listed = 0;
  for (const auto& product : YAML::LoadFile(reference.string())["products"]) {
    for (const auto& profile : product.second["profiles"]) {
      std::string resource = profile["resource_name"].as<std::string>();
      ++listed;
      EXPECT_TRUE(managed.count(resource))
          << resource << " (" << product.first.as<std::string>() << ") is not managed";
    }
  }
  EXPECT_GT(listed, 40u);
}

// One filter entry for GPU pods and nothing else: with the shipped best-only policy a GPU pod costs
// kube-scheduler one call, and a pod without GPUs none.
TEST(Manifests, best_only_configuration_filters_gpu_pods_only) {
  ServerOptions defaults;
  YAML::Node cfg =
      YAML::LoadFile((kManifests / "scheduler-config" / "extender-best-only.yaml").string());
  ASSERT_EQ(cfg["extenders"].size(), 1u);
  YAML::Node e = cfg["extenders"][0];
  EXPECT_EQ(e["filterVerb"].as<std::string>(), defaults.filter_verb);
  EXPECT_FALSE(e["prioritizeVerb"]);
  EXPECT_FALSE(e["ignorable"].as<bool>());
  EXPECT_TRUE(e["nodeCacheCapable"].as<bool>());
  EXPECT_EQ(Managed(e, "extender-best-only.yaml"),
            Managed(YAML::LoadFile(kRecommended.string())["extenders"][0], "recommended"));
}

TEST(Manifests, all_pods_configuration_pairs_with_the_best_only_policy) {
  ServerOptions defaults;
  YAML::Node e = YAML::LoadFile(
      (kManifests / "scheduler-config" / "extender-all-pods.yaml").string())["extenders"][0];
  EXPECT_FALSE(e["managedResources"]);  // every pod reaches gpusched
  EXPECT_EQ(e["filterVerb"].as<std::string>(), defaults.filter_verb);
  EXPECT_EQ(e["prioritizeVerb"].as<std::string>(), defaults.prioritize_verb);
  EXPECT_TRUE(e["nodeCacheCapable"].as<bool>());
  EXPECT_GT(e["weight"].as<int>(), 0);
  auto policy =
      LoadPolicy((kManifests.parent_path() / "policies" / "packing-all-pods.yaml").string());
  ASSERT_TRUE(policy.ok()) << policy.problems.lines()[0];
  EXPECT_TRUE(policy.value->spec().filter_best_only);
  for (const auto& profile : policy.value->spec().profiles)
    EXPECT_FALSE(profile.gpu_pods_only) << profile.name;
}

TEST(Manifests, scheduler_configurations_match_the_servers_routes_and_port) {
  ServerOptions defaults;
  std::set<std::string> recommended_managed =
      Managed(YAML::LoadFile(kRecommended.string())["extenders"][0], "extender-recommended.yaml");
  for (const char* file : {"extender-default-profile.yaml"}) {
    YAML::Node cfg = YAML::LoadFile((kManifests / "scheduler-config" / file).string());
    EXPECT_EQ(cfg["apiVersion"].as<std::string>(), "kubescheduler.config.k8s.io/v1") << file;
    ASSERT_EQ(cfg["extenders"].size(), 1u) << file;
    YAML::Node e = cfg["extenders"][0];
    std::string url = e["urlPrefix"].as<std::string>();
    EXPECT_TRUE(url.starts_with("http://") || url.starts_with("https://")) << url;
    EXPECT_TRUE(url.ends_with(":" + std::to_string(defaults.port))) << url;  // no path: verbs at /
    EXPECT_EQ(e["filterVerb"].as<std::string>(), defaults.filter_verb) << file;
    EXPECT_EQ(e["prioritizeVerb"].as<std::string>(), defaults.prioritize_verb) << file;
    EXPECT_GT(e["weight"].as<int>(), 0) << file;
    EXPECT_TRUE(e["nodeCacheCapable"].as<bool>()) << file;
    // The same GPU resources as the recommended registration's filter entry.
    EXPECT_EQ(Managed(e, file), recommended_managed) << file;
  }
}

TEST(Manifests, tls_overlay_serves_mtls_where_the_scheduler_config_points_and_probes_plain_ops) {
  fs::path dir = kManifests / "tls";
  YAML::Node k = YAML::LoadFile((dir / "kustomization.yaml").string());
  EXPECT_EQ(k["resources"][0].as<std::string>(), "../base");
  YAML::Node patch = YAML::LoadFile((dir / "deployment-patch.yaml").string());
  YAML::Node pod = patch["spec"]["template"]["spec"];
  YAML::Node c = pod["containers"][0];
  auto args = ServeArgs(c);
  ASSERT_TRUE(args.count("--tls-cert") && args.count("--tls-key") && args.count("--client-ca"));
  // Files come from the mounted Secret.
  std::string mount = c["volumeMounts"][0]["mountPath"].as<std::string>();
  for (const char* f : {"--tls-cert", "--tls-key", "--client-ca"}) {
    EXPECT_TRUE(args[f].starts_with(mount + "/")) << f;
  }
  EXPECT_EQ(pod["volumes"][0]["secret"]["secretName"].as<std::string>(), "gpusched-tls");
  std::map<std::string, int> ports;
  for (const auto& p : c["ports"])
    ports[p["name"].as<std::string>()] = p["containerPort"].as<int>();
  EXPECT_EQ(ports["https"], PortOf(args["--listen"]));
  EXPECT_EQ(ports["ops"], PortOf(args["--ops-listen"]));
  // Probes cannot show a client certificate: they go to the plain operations port.
  for (const char* probe : {"livenessProbe", "readinessProbe"}) {
    EXPECT_EQ(c[probe]["httpGet"]["port"].as<std::string>(), "ops") << probe;
  }
  // kube-scheduler's example points at the Service's HTTPS port (at its ClusterIP, which a
  // host-network kube-scheduler reaches without cluster DNS) with mTLS client settings.
  YAML::Node e = YAML::LoadFile(
      (kManifests / "scheduler-config" / "extender-mtls.yaml").string())["extenders"][0];
  std::string url = e["urlPrefix"].as<std::string>();
  EXPECT_TRUE(url.starts_with("https://")) << url;
  EXPECT_EQ(url.find(".svc"), std::string::npos)
      << url << ": cluster DNS, which kube-scheduler on the host network cannot resolve";
  YAML::Node svc = YAML::LoadFile((dir / "service-patch.yaml").string());
  bool found = false;
  for (const auto& p : svc["spec"]["ports"]) {
    if (url.ends_with(":" + p["port"].as<std::string>())) {
      found = true;
      EXPECT_EQ(p["targetPort"].as<std::string>(), "https");
    }
  }
  EXPECT_TRUE(found) << url << " is not a port of the Service";
  EXPECT_TRUE(e["enableHTTPS"].as<bool>());
  for (const char* f : {"caFile", "certFile", "keyFile"}) EXPECT_TRUE(e["tlsConfig"][f]) << f;
  EXPECT_EQ(e["filterVerb"].as<std::string>(), ServerOptions().filter_verb);
  EXPECT_TRUE(e["nodeCacheCapable"].as<bool>());
}

// The mutual-TLS example is the recommended registration over HTTPS: the same two entries, each
// with the same TLS client settings.
TEST(Manifests, mtls_configuration_is_the_recommended_one_over_https) {
  YAML::Node mtls = YAML::LoadFile(
      (kManifests / "scheduler-config" / "extender-mtls.yaml").string())["extenders"];
  YAML::Node recommended = YAML::LoadFile(kRecommended.string())["extenders"];
  ASSERT_EQ(mtls.size(), recommended.size());
  for (size_t i = 0; i < mtls.size(); ++i) {
    EXPECT_EQ(mtls[i]["urlPrefix"].as<std::string>(), mtls[0]["urlPrefix"].as<std::string>()) << i;
    EXPECT_TRUE(mtls[i]["enableHTTPS"].as<bool>()) << i;
    EXPECT_EQ(YAML::Dump(mtls[i]["tlsConfig"]), YAML::Dump(mtls[0]["tlsConfig"])) << i;
    std::map<std::string, std::string> entry = WithoutAddress(mtls[i]);
    entry.erase("enableHTTPS");
    entry.erase("tlsConfig");
    EXPECT_EQ(entry, WithoutAddress(recommended[i])) << "entry " << i;
  }
}

}  // namespace
}  // namespace gpusched::manifests_test
