// `gpusched scheduler-config`: the registrations the manifests ship are its output, its table of
// MIG profiles is NVIDIA's, a cluster adds what its nodes advertise (never a hostile name), and
// a wrong install description is refused before anything is written.
#include "gpusched/app/scheduler_config.h"
#include "gpusched/app/scheduler_config_command.h"

#include <filesystem>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "gpusched/app/inventory_source.h"
#include "gpusched/inventory/static_inventory.h"
#include "gpusched/model/gpu_resources.h"
#include "gpusched/model/known_mig_profiles.h"
#include "testing/test_support.h"

namespace gpusched::scheduler_config_test {
namespace {

namespace fs = std::filesystem;
const fs::path kRepo = fs::path(GPUSCHED_SOURCE_DIR);

std::vector<std::string> Split(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

// What `gpusched scheduler-config ARGS` writes without a cluster.
std::string Written(const std::vector<std::string>& args) {
  FlagSet flags = SchedulerConfigCommandOptions::Flags();
  EXPECT_TRUE(flags.Parse(args).empty());
  auto options = SchedulerConfigCommandOptions::FromFlags(flags, args);
  EXPECT_TRUE(options.ok()) << options.problems.lines()[0];
  auto written = SchedulerConfigWithoutCluster(options.value);
  EXPECT_TRUE(written.ok()) << written.problems.lines()[0];
  return written.value;
}

// The arguments a shipped registration names on its "gpusched scheduler-config ..." line.
std::vector<std::string> NamedArgs(const std::string& text, const std::string& file) {
  const std::string marker = "gpusched scheduler-config";
  auto at = text.find(marker);
  EXPECT_NE(at, std::string::npos) << file << " does not say which command wrote it";
  if (at == std::string::npos) return {};
  return Split(text.substr(at + marker.size(), text.find('\n', at) - at - marker.size()));
}

std::set<std::string> Managed(const std::string& config) {
  std::set<std::string> out;
  for (const auto& entry : YAML::Load(config)["extenders"]) {
    for (const auto& r : entry["managedResources"]) out.insert(r["name"].as<std::string>());
  }
  return out;
}

TEST(SchedulerConfig, every_shipped_registration_is_what_the_command_writes) {
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(kRepo / "manifests" / "scheduler-config")) {
    const std::string text = testing::ReadFile(entry.path().string());
    EXPECT_EQ(text, Written(NamedArgs(text, entry.path().string())))
        << entry.path() << " differs: run scripts/update-scheduler-configs.sh";
    ++files;
  }
  EXPECT_GE(files, 5u);
}

TEST(SchedulerConfig, the_second_schedulers_configmap_holds_what_the_command_writes) {
  const fs::path path = kRepo / "manifests" / "second-scheduler" / "scheduler-configmap.yaml";
  YAML::Node configmap = YAML::LoadFile(path.string());
  const std::string text = testing::ReadFile(path.string());
  const std::string config = configmap["data"]["config.yaml"].as<std::string>();
  EXPECT_EQ(config, Written(NamedArgs(text, path.string())))
      << "run scripts/update-scheduler-configs.sh";
  EXPECT_EQ(YAML::Load(config)["profiles"][0]["schedulerName"].as<std::string>(), "gpusched");
}

TEST(SchedulerConfig, the_known_profiles_are_the_ones_nvidia_documents) {
  const char* shared = std::getenv("GPUSCHED_SHARED_DIR");
  fs::path reference = (shared != nullptr ? fs::path(shared) : kRepo.parent_path() / "shared") /
                       "reference" / "mig-profiles.yaml";
  if (!fs::exists(reference)) GTEST_SKIP() << "no MIG reference at " << reference;
  std::set<std::string> documented;
  std::set<std::string> products;
  for (const auto& product : YAML::LoadFile(reference.string())["products"]) {
    products.insert(product.first.as<std::string>());
    for (const auto& profile : product.second["profiles"]) {
      documented.insert(profile["resource_name"].as<std::string>());
    }
  }
  std::set<std::string> known;
  std::set<std::string> known_products;
  for (const KnownMigProduct& product : KnownMigProducts()) {
    known_products.insert(std::string(product.product));
    for (auto profile : product.profiles) {
      known.insert(std::string(kMigResourcePrefix) + std::string(profile));
    }
  }
  EXPECT_EQ(known, documented);
  EXPECT_EQ(known_products, products);
  std::set<std::string> managed = Managed(Written({}));
  for (const auto& name : documented) EXPECT_TRUE(managed.count(name)) << name;
}

std::shared_ptr<const ClusterSnapshot> SnapshotOfFile(const std::string& text) {
  Inventory inventory = ParseInventory(text, "test");
  return MakeStaticSource(inventory, GpuResourceNames(), "test")->snapshots().Get();
}

TEST(SchedulerConfig, a_cluster_adds_what_its_nodes_advertise_and_no_hostile_name) {
  auto snapshot = SnapshotOfFile(R"({"apiVersion":"v1","kind":"List","items":[
    {"apiVersion":"v1","kind":"Node","metadata":{"name":"a"},"status":{
      "allocatable":{"cpu":"8","nvidia.com/gpu":"2","nvidia.com/mig-1g.10gb.shared":"14"},
      "capacity":{"cpu":"8","nvidia.com/gpu":"2","nvidia.com/mig-1g.10gb.shared":"14"}}},
    {"apiVersion":"v1","kind":"Node","metadata":{"name":"b"},"status":{
      "allocatable":{"cpu":"8","nvidia.com/mig-1g.10gb.shared":"7",
                     "nvidia.com/mig-x\"}\n- {name: evil":"1"}}}]})");
  AdvertisedResources advertised = AdvertisedGpuResources(*snapshot, GpuResourceNames());
  EXPECT_EQ(advertised.nodes["nvidia.com/mig-1g.10gb.shared"], 2);
  EXPECT_EQ(advertised.nodes["nvidia.com/gpu"], 1);
  ASSERT_EQ(advertised.refused.size(), 1u);
  EXPECT_EQ(advertised.refused[0].find('\n'), std::string::npos);

  SchedulerConfigSpec spec;
  spec.resources = ManagedGpuResources(advertised.nodes, {"example.com/accelerator"}, true);
  ASSERT_TRUE(CheckSchedulerConfigSpec(spec).empty());
  const std::string config = WriteSchedulerConfig(spec);
  std::set<std::string> managed = Managed(config);
  EXPECT_TRUE(managed.count("nvidia.com/mig-1g.10gb.shared"));
  EXPECT_TRUE(managed.count("example.com/accelerator"));
  EXPECT_TRUE(managed.count("nvidia.com/mig-7g.80gb"));
  EXPECT_EQ(config.find("evil"), std::string::npos);
  EXPECT_NE(config.find("nvidia.com/mig-1g.10gb.shared, ignoredByScheduler: false}"),
            std::string::npos);
  EXPECT_NE(config.find("# 2 nodes advertise it"), std::string::npos);
}

TEST(SchedulerConfig, the_real_node_fixtures_need_no_cluster_to_be_managed) {
  std::set<std::string> managed = Managed(Written({}));
  size_t seen = 0;
  for (const auto& entry : fs::directory_iterator(kRepo / "tests" / "fixtures" / "real-nodes")) {
    if (entry.path().extension() != ".yaml") continue;
    auto snapshot = SnapshotOfFile(testing::ReadFile(entry.path().string()));
    for (const auto& [name, nodes] : AdvertisedGpuResources(*snapshot, GpuResourceNames()).nodes) {
      EXPECT_TRUE(managed.count(name)) << name << " of " << entry.path().filename();
      ++seen;
    }
  }
  EXPECT_GT(seen, 10u);
}

TEST(SchedulerConfig, each_install_gives_the_address_and_settings_it_promises) {
  YAML::Node kubeadm = YAML::Load(Written({}));
  EXPECT_EQ(kubeadm["extenders"][0]["urlPrefix"].as<std::string>(), "http://127.0.0.1:8888");
  EXPECT_EQ(kubeadm["clientConnection"]["kubeconfig"].as<std::string>(),
            "/etc/kubernetes/scheduler.conf");
  EXPECT_FALSE(kubeadm["profiles"]);
  EXPECT_FALSE(kubeadm["leaderElection"]);

  YAML::Node tls =
      YAML::Load(Written({"--install", "service-tls", "--url", "https://10.0.0.7:8443"}));
  for (const auto& entry : tls["extenders"]) {
    EXPECT_TRUE(entry["enableHTTPS"].as<bool>());
    EXPECT_EQ(entry["tlsConfig"]["caFile"].as<std::string>(), "/etc/kubernetes/gpusched/ca.crt");
  }

  YAML::Node second = YAML::Load(Written({"--install", "second-scheduler"}));
  EXPECT_EQ(second["clientConnection"]["kubeconfig"].as<std::string>(), "");
  EXPECT_EQ(second["leaderElection"]["resourceNamespace"].as<std::string>(), "gpusched-scheduler");
  EXPECT_EQ(second["profiles"][0]["schedulerName"].as<std::string>(), "gpusched");

  YAML::Node none = YAML::Load(Written({"--scheduler-kubeconfig", "none"}));
  EXPECT_FALSE(none["clientConnection"]);
  YAML::Node gpu_pods = YAML::Load(Written({"--registration", "gpu-pods"}));
  ASSERT_EQ(gpu_pods["extenders"].size(), 1u);
  EXPECT_FALSE(gpu_pods["extenders"][0]["prioritizeVerb"]);
  YAML::Node all = YAML::Load(Written({"--registration", "all-pods"}));
  EXPECT_FALSE(all["extenders"][0]["managedResources"]);
}

TEST(SchedulerConfig, a_wrong_description_is_refused_with_its_flag_named) {
  auto problems = [](std::vector<std::string> args) {
    FlagSet flags = SchedulerConfigCommandOptions::Flags();
    if (Problems problems = flags.Parse(args); !problems.empty()) return problems.lines();
    auto options = SchedulerConfigCommandOptions::FromFlags(flags, args);
    if (!options.ok()) return options.problems.lines();
    return SchedulerConfigWithoutCluster(options.value).problems.lines();
  };
  auto first = [&](std::vector<std::string> args) {
    auto lines = problems(std::move(args));
    return lines.empty() ? std::string() : lines[0];
  };
  EXPECT_NE(first({"--url", "https://10.0.0.7:8443"}).find("needs --tls-dir"), std::string::npos);
  EXPECT_NE(first({"--url", "http://a\"b"}).find("--url"), std::string::npos);
  EXPECT_NE(first({"--url", "http://x:1", "--tls-dir", "/etc/x"}).find("--tls-dir"),
            std::string::npos);
  EXPECT_NE(first({"--install", "eks"}).find("--install eks"), std::string::npos);
  EXPECT_NE(first({"--registration", "some"}).find("--registration some"), std::string::npos);
  EXPECT_NE(first({"--lease", "nolease"}).find("--lease"), std::string::npos);
  EXPECT_NE(first({"--resources", "all"}).find("--resources"), std::string::npos);
  EXPECT_NE(first({"--scheduler-kubeconfig", "relative/path"}).find("--scheduler-kubeconfig"),
            std::string::npos);
  EXPECT_TRUE(problems({"--install", "second-scheduler"}).empty());
}

}  // namespace
}  // namespace gpusched::scheduler_config_test
