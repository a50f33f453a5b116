#include "gpusched/kube/live_inventory.h"

#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "gpusched/codec/extender_codec.h"
#include "gpusched/inventory/static_inventory.h"
#include "testing/fake_apiserver.h"

namespace gpusched::live_inventory_test {
namespace {

using namespace std::chrono_literals;
using testing::FakeApiServer;
using testing::MakeGpuNode;
using testing::MakeGpuPod;

// Quick retries, and pages of 7 so lists take several pages.
LiveInventoryOptions FastOptions(uint64_t seed = 1) {
  LiveInventoryOptions o = testing::FastLiveOptions(seed);
  o.reflector.page_size = 7;
  return o;
}

KubeConfig ConfigFor(const FakeApiServer& server) {
  KubeConfig c;
  c.server = server.url();
  c.token = FakeApiServer::kToken;
  c.context = "fake";
  return c;
}

// What a node's usage looks like in a test: GPUs, CPU (milli) and bound pods.
struct NodeUse {
  int64_t gpus = 0;
  int64_t cpu_milli = 0;
  int32_t pods = 0;
  bool operator==(const NodeUse&) const = default;
};
void PrintTo(const NodeUse& u, std::ostream* os) {
  *os << "{gpus " << u.gpus << ", cpu " << u.cpu_milli << "m, pods " << u.pods << "}";
}
NodeUse UseOf(const NodeState& n) {
  return {n.used.units("nvidia.com/gpu"), n.used.milli("cpu"), n.pod_count};
}

// The per-node usage and node set a correct inventory must show: the fake server's objects run
// through a fresh ledger.
std::map<std::string, NodeUse> Truth(const FakeApiServer& server) {
  std::string list = R"({"kind":"List","items":[)";
  bool first = true;
  for (const auto& n : server.Nodes()) {
    nlohmann::json node = n;
    node["kind"] = "Node";
    list += (first ? "" : ",") + node.dump();
    first = false;
  }
  for (const auto& p : server.Pods()) {
    nlohmann::json pod = p;
    pod["kind"] = "Pod";
    list += (first ? "" : ",") + pod.dump();
    first = false;
  }
  list += "]}";
  ClusterLedger ledger{GpuResourceNames()};
  ApplyInventory(ParseInventory(list, "truth"), ledger);
  std::map<std::string, NodeUse> usage;
  auto snapshot = ledger.BuildSnapshot();
  for (const auto& n : snapshot->nodes()) usage[n->info.name] = UseOf(*n);
  return usage;
}

std::map<std::string, NodeUse> Seen(const Published<ClusterSnapshot>& published) {
  std::map<std::string, NodeUse> usage;
  auto snapshot = published.Get();
  for (const auto& n : snapshot->nodes()) usage[n->info.name] = UseOf(*n);
  return usage;
}

// Polls until the published snapshot equals the server's truth; at most `limit`.
bool Converges(const FakeApiServer& server, const Published<ClusterSnapshot>& published,
               std::chrono::milliseconds limit = 10000ms) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (Seen(published) == Truth(server)) return true;
    std::this_thread::sleep_for(10ms);
  }
  return Seen(published) == Truth(server);
}

// Polls until `done()` holds; at most `limit`.
template <class F>
bool Eventually(F&& done, std::chrono::milliseconds limit = 10000ms) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

void Populate(FakeApiServer& server, int nodes, int pods) {
  for (int i = 0; i < nodes; ++i) server.UpsertNode(MakeGpuNode("node-" + std::to_string(i), 8));
  for (int i = 0; i < pods; ++i) {
    server.UpsertPod(MakeGpuPod("ns", "pod-" + std::to_string(i), "uid-" + std::to_string(i),
                                "node-" + std::to_string(i % nodes), 1 + i % 3));
  }
}

TEST(LiveInventory, paged_initial_sync_matches_the_server_and_reports_ready) {
  FakeApiServer server;
  server.RequireToken(FakeApiServer::kToken);
  Populate(server, 20, 45);
  Published<ClusterSnapshot> published;
  LiveInventoryOptions o = FastOptions();
  o.reflector.watch_list = false;
  LiveInventory inventory(ConfigFor(server), GpuResourceNames(), published, o);
  ASSERT_TRUE(Converges(server, published));
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!inventory.Status().synced && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  InventoryStatus status = inventory.Status();
  EXPECT_TRUE(status.synced);
  EXPECT_NE(status.detail.find("20 nodes"), std::string::npos) << status.detail;
  EXPECT_GE(server.lists_served(), 2u + 2u);  // 20 nodes and 45 pods in pages of 7
  EXPECT_EQ(server.watch_lists_served(), 0u);
}

// Where the server offers it, the initial sync is one watch stream per kind, which goes on as the
// watch: no list is made, and later changes arrive on the same stream.
TEST(LiveInventory, watch_list_initial_sync_matches_the_server_and_goes_on_as_the_watch) {
  FakeApiServer server;
  server.RequireToken(FakeApiServer::kToken);
  Populate(server, 20, 45);
  Published<ClusterSnapshot> published;
  LiveInventory inventory(ConfigFor(server), GpuResourceNames(), published, FastOptions());
  ASSERT_TRUE(Converges(server, published));
  ASSERT_TRUE(Eventually([&] { return inventory.Status().synced; }));
  EXPECT_EQ(inventory.watch_lists(), 2u);
  EXPECT_EQ(inventory.lists(), 2u);
  server.UpsertPod(MakeGpuPod("ns", "late", "uid-late", "node-3", 2));
  server.DeletePod("ns", "pod-4");
  EXPECT_TRUE(Converges(server, published));
  EXPECT_EQ(server.lists_served(), 0u);
  EXPECT_EQ(server.watch_lists_served(), 2u);
  EXPECT_EQ(server.watches_served(), 2u);  // no second stream was needed
}

// A server that does not offer watch-list answers in one of three ways; each is taken as a no,
// once per kind, and the inventory lists in pages at once (no backoff: nothing failed).
TEST(LiveInventory, a_server_without_watch_list_is_listed_in_pages) {
  for (auto answer :
       {FakeApiServer::WatchListAnswer::kErrorEvent, FakeApiServer::WatchListAnswer::kInvalid,
        FakeApiServer::WatchListAnswer::kIgnored}) {
    FakeApiServer server;
    server.SetWatchListAnswer(answer);
    server.SetBookmarkInterval(100ms);
    Populate(server, 20, 45);
    Published<ClusterSnapshot> published;
    LiveInventory inventory(ConfigFor(server), GpuResourceNames(), published, FastOptions());
    ASSERT_TRUE(Converges(server, published)) << static_cast<int>(answer);
    ASSERT_TRUE(Eventually([&] { return inventory.Status().synced; }));
    EXPECT_EQ(inventory.watch_lists(), 0u);
    EXPECT_EQ(server.watch_lists_served(), 2u) << static_cast<int>(answer);
    EXPECT_GE(server.lists_served(), 2u + 2u);
    server.UpsertPod(MakeGpuPod("ns", "late", "uid-late", "node-3", 2));
    EXPECT_TRUE(Converges(server, published));
  }
}

// Readiness gates the extender verbs, so it must not be reported before a snapshot holding both
// initial lists is published: with a slow publisher, the lists are in the ledger well before that.
TEST(LiveInventory, reports_synced_only_once_the_complete_snapshot_is_published) {
  FakeApiServer server;
  server.RequireToken(FakeApiServer::kToken);
  Populate(server, 20, 45);
  LiveInventoryOptions options = FastOptions();
  options.publish_interval = 300ms;
  Published<ClusterSnapshot> published;
  LiveInventory inventory(ConfigFor(server), GpuResourceNames(), published, options);
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!inventory.Status().synced && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_TRUE(inventory.Status().synced);
  EXPECT_EQ(Seen(published), Truth(server));  // at once, no waiting
}

TEST(LiveInventory, created_deleted_and_finished_pods_change_usage_at_once) {
  FakeApiServer server;
  Populate(server, 3, 0);
  Published<ClusterSnapshot> published;
  LiveInventory inventory(ConfigFor(server), GpuResourceNames(), published, FastOptions());
  ASSERT_TRUE(Converges(server, published));
  server.UpsertPod(MakeGpuPod("ns", "a", "uid-a", "node-0", 4));
  server.UpsertPod(MakeGpuPod("ns", "b", "uid-b", "node-1", 2));
  ASSERT_TRUE(Converges(server, published));
  EXPECT_EQ(Seen(published)["node-0"].gpus, 4);
  server.UpsertPod(MakeGpuPod("ns", "a", "uid-a", "node-0", 4, "Succeeded"));
  server.DeletePod("ns", "b");
  ASSERT_TRUE(Converges(server, published));
  EXPECT_EQ(Seen(published)["node-0"].gpus, 0);
  EXPECT_EQ(Seen(published)["node-1"].gpus, 0);
  server.DeleteNode("node-2");
  ASSERT_TRUE(Converges(server, published));
  EXPECT_EQ(published.Get()->Find("node-2"), nullptr);
}

TEST(LiveInventory, pods_without_gpus_count_their_cpu_while_bound) {
  FakeApiServer server;
  Populate(server, 2, 0);
  server.UpsertPod(MakeGpuPod("ns", "listed", "uid-listed", "node-0", 0));
  server.UpsertPod(MakeGpuPod("ns", "pending", "uid-pending", "", 0));
  Published<ClusterSnapshot> published;
  LiveInventory inventory(ConfigFor(server), GpuResourceNames(), published, FastOptions());
  ASSERT_TRUE(Converges(server, published));
  EXPECT_EQ(Seen(published)["node-0"], (NodeUse{0, 1000, 1}));  // from the list
  EXPECT_EQ(published.Get()->Find("node-0")->free_milli("cpu"), 95000);
  server.UpsertPod(MakeGpuPod("ns", "pending", "uid-pending", "node-1", 0));  // bound by watch
  server.UpsertPod(MakeGpuPod("ns", "gpu", "uid-gpu", "node-1", 2));
  ASSERT_TRUE(Converges(server, published));
  EXPECT_EQ(Seen(published)["node-1"], (NodeUse{2, 2000, 2}));
  EXPECT_EQ(published.Get()->Find("node-1")->gpu_pod_count, 1);
  server.UpsertPod(MakeGpuPod("ns", "listed", "uid-listed", "node-0", 0, "Succeeded"));
  ASSERT_TRUE(Converges(server, published));
  EXPECT_EQ(Seen(published)["node-0"], (NodeUse{0, 0, 0}));
  EXPECT_EQ(inventory.Status().gpu_pods, 1u);
}

TEST(LiveInventory, compaction_while_disconnected_relists_and_drops_what_was_deleted) {
  for (bool gone_as_http : {false, true}) {
    FakeApiServer server;
    server.SetGoneAsHttpStatus(gone_as_http);
    Populate(server, 4, 8);
    Published<ClusterSnapshot> published;
    LiveInventory inventory(ConfigFor(server), GpuResourceNames(), published, FastOptions());
    ASSERT_TRUE(Converges(server, published));
    uint64_t lists_before = inventory.lists();
    server.FailNextRequests(4, 503);  // keep the client away while things change
    server.CloseWatches();
    server.DeletePod("ns", "pod-0");
    server.DeleteNode("node-3");
    server.UpsertPod(MakeGpuPod("ns", "late", "uid-late", "node-1", 3));
    server.Compact();
    ASSERT_TRUE(Converges(server, published)) << "gone_as_http=" << gone_as_http;
    EXPECT_GT(inventory.lists(), lists_before);
    EXPECT_EQ(published.Get()->Find("node-3"), nullptr);
  }
}

TEST(LiveInventory, survives_auth_errors_throttling_and_server_errors) {
  FakeApiServer server;
  server.RequireToken("another-token");  // our token is refused: 401 until fixed
  Populate(server, 2, 2);
  Published<ClusterSnapshot> published;
  LiveInventory inventory(ConfigFor(server), GpuResourceNames(), published, FastOptions());
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(inventory.Status().synced);
  server.RequireToken(FakeApiServer::kToken);
  ASSERT_TRUE(Converges(server, published));
  for (int status : {401, 403, 429, 500, 503}) {
    server.FailNextRequests(3, status);
    server.CloseWatches();
    server.UpsertPod(
        MakeGpuPod("ns", "p" + std::to_string(status), "u" + std::to_string(status), "node-0", 1));
    ASSERT_TRUE(Converges(server, published)) << status;
  }
}

TEST(LiveInventory, dropped_mid_event_duplicates_and_hung_watches_do_not_corrupt_the_ledger) {
  FakeApiServer server;
  Populate(server, 3, 3);
  Published<ClusterSnapshot> published;
  LiveInventory inventory(ConfigFor(server), GpuResourceNames(), published, FastOptions());
  ASSERT_TRUE(Converges(server, published));
  server.SetDuplicateEvents(true);
  server.UpsertPod(MakeGpuPod("ns", "dup", "uid-dup", "node-0", 2));
  ASSERT_TRUE(Converges(server, published));
  EXPECT_EQ(Seen(published)["node-0"].gpus, 1 + 2);  // pod-0 (1 GPU) + dup, counted once

  server.DropWatchesMidEvent();
  server.UpsertPod(MakeGpuPod("ns", "after-drop", "uid-ad", "node-1", 1));
  ASSERT_TRUE(Converges(server, published));

  server.HangNextRequests(2);  // the next watches hang before answering; the idle limit ends them
  server.CloseWatches();
  server.UpsertPod(MakeGpuPod("ns", "after-hang", "uid-ah", "node-2", 1));
  ASSERT_TRUE(Converges(server, published, 15000ms));
  server.ClearFaults();
}

// Hundreds of random cluster changes mixed with injected faults; once the faults stop, the
// inventory equals the server's truth within a bounded time, for every seed.
TEST(LiveInventory, randomized_changes_with_faults_always_converge) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    std::mt19937_64 rng(seed);
    FakeApiServer server;
    server.SetBookmarkInterval(50ms);
    Populate(server, 6, 6);
    Published<ClusterSnapshot> published;
    LiveInventory inventory(ConfigFor(server), GpuResourceNames(), published, FastOptions(seed));
    int next_pod = 100;
    auto pick = [&](int n) { return static_cast<int>(rng() % n); };
    for (int step = 0; step < 300; ++step) {
      int op = pick(100);
      std::string node = "node-" + std::to_string(pick(8));
      if (op < 35) {
        int id = next_pod++;
        // 0 GPUs: a pod that holds only CPU, which counts too.
        server.UpsertPod(MakeGpuPod("ns", "r" + std::to_string(id), "ru" + std::to_string(id),
                                    pick(5) == 0 ? "" : node, pick(5)));
      } else if (op < 55) {
        auto pods = server.Pods();
        if (!pods.empty()) {
          auto& p = pods[pick(static_cast<int>(pods.size()))];
          server.DeletePod(p["metadata"]["namespace"], p["metadata"]["name"]);
        }
      } else if (op < 65) {
        auto pods = server.Pods();
        if (!pods.empty()) {
          auto p = pods[pick(static_cast<int>(pods.size()))];
          p["status"]["phase"] = pick(2) ? "Succeeded" : "Failed";
          server.UpsertPod(p);
        }
      } else if (op < 72) {
        server.UpsertNode(MakeGpuNode(node, 4 + 4 * pick(2)));
      } else if (op < 76) {
        server.DeleteNode(node);
      } else if (op < 80) {
        server.FailNextRequests(1 + pick(3), std::vector<int>{401, 403, 429, 500, 503}[pick(5)]);
      } else if (op < 84) {
        server.DropWatchesMidEvent();
      } else if (op < 88) {
        server.CloseWatches();
      } else if (op < 91) {
        server.Compact();
      } else if (op < 95) {
        server.SetDuplicateEvents(pick(2) == 0);
      } else if (op < 97) {
        server.SetDelay(std::chrono::milliseconds(pick(20)));
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(pick(20)));
      }
    }
    server.ClearFaults();
    server.SetDelay(0ms);
    ASSERT_TRUE(Converges(server, published, 15000ms)) << "seed " << seed;
  }
}

TEST(LiveInventory, a_restarted_process_syncs_to_exactly_the_same_ledger) {
  FakeApiServer server;
  Populate(server, 10, 25);
  server.UpsertPod(MakeGpuPod("ns", "done", "uid-done", "node-1", 3, "Succeeded"));
  std::map<std::string, NodeUse> before;
  {
    Published<ClusterSnapshot> published;
    LiveInventory first(ConfigFor(server), GpuResourceNames(), published, FastOptions());
    ASSERT_TRUE(Converges(server, published));
    before = Seen(published);
  }
  Published<ClusterSnapshot> published;
  LiveInventory second(ConfigFor(server), GpuResourceNames(), published, FastOptions());
  ASSERT_TRUE(Converges(server, published));
  EXPECT_EQ(Seen(published), before);
}

TEST(LiveInventory, rereads_a_rotated_token_file) {
  FakeApiServer server;
  server.RequireToken("token-one");
  Populate(server, 2, 2);
  std::string token_file =
      std::filesystem::temp_directory_path() / ("gpusched-token-" + std::to_string(::getpid()));
  { std::ofstream(token_file) << "token-one\n"; }
  KubeConfig config = ConfigFor(server);
  config.token.clear();
  config.token_file = token_file;
  Published<ClusterSnapshot> published;
  LiveInventory inventory(config, GpuResourceNames(), published, FastOptions());
  ASSERT_TRUE(Converges(server, published));
  // kubelet rotates the projected token; the server stops accepting the old one.
  { std::ofstream(token_file) << "token-two\n"; }
  server.RequireToken("token-two");
  server.CloseWatches();
  server.UpsertPod(MakeGpuPod("ns", "after-rotation", "uid-rot", "node-0", 2));
  ASSERT_TRUE(Converges(server, published));
  std::filesystem::remove(token_file);
}

TEST(KubeConfig, reads_the_fake_servers_kubeconfig) {
  FakeApiServer server;
  std::string path = std::filesystem::temp_directory_path() / "gpusched-kubeconfig-test.yaml";
  server.WriteKubeconfig(path);
  KubeConfig c = LoadKubeconfig(path);
  EXPECT_EQ(c.server, server.url());
  EXPECT_EQ(c.token, FakeApiServer::kToken);
  EXPECT_EQ(c.context, "fake");
  EXPECT_THROW(LoadKubeconfig(path, "missing"), KubeConfigError);
  std::filesystem::remove(path);
}

TEST(KubeConfig, base64_data_fields_decode) {
  EXPECT_EQ(Base64Decode("aGVsbG8gd29ybGQ="), "hello world");
  EXPECT_EQ(Base64Decode("YQ=="), "a");
}

}  // namespace
}  // namespace gpusched::live_inventory_test

namespace gpusched::live_inventory_test {
namespace {

// A calm cluster sends nothing on a watch for minutes. A watch that has been answered lives until
// its own timeoutSeconds however quiet it is; the idle limit is only for a server that never
// answers (covered above). Here the idle limit is 1 s and the cluster is silent for 3 s.
TEST(LiveInventory, a_quiet_watch_is_not_cut_by_the_idle_limit) {
  FakeApiServer server;
  server.SetBookmarkInterval(std::chrono::seconds(20));  // not even a bookmark while we wait
  Populate(server, 3, 3);
  Published<ClusterSnapshot> published;
  LiveInventoryOptions options = FastOptions();
  options.reflector.client.stream_idle_timeout = std::chrono::seconds(1);
  options.reflector.watch_timeout = std::chrono::seconds(30);
  LiveInventory inventory(ConfigFor(server), GpuResourceNames(), published, options);
  ASSERT_TRUE(Converges(server, published));
  // Both reflectors' watches open (nodes and pods) before counting: a synced snapshot does not
  // mean the second watch has reached the server yet, least of all on a loaded machine.
  for (int i = 0; i < 500 && server.watches_served() < 2; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_GE(server.watches_served(), 2u);
  uint64_t watches = server.watches_served();
  std::this_thread::sleep_for(3s);
  EXPECT_EQ(server.watches_served(), watches) << "a quiet watch was re-established";
  EXPECT_EQ(inventory.watch_restarts(), 0u);
  server.UpsertPod(MakeGpuPod("ns", "late", "uid-late", "node-0", 1));
  EXPECT_TRUE(Converges(server, published));
}

}  // namespace
}  // namespace gpusched::live_inventory_test

namespace gpusched::live_inventory_test {
namespace {

// Usage of `node` in the published snapshot, in whole GPUs; -1 when the node is absent.
int64_t GpusUsed(const Published<ClusterSnapshot>& published, const std::string& node) {
  auto snapshot = published.Get();  // keeps the node alive while it is read
  const NodeState* n = snapshot->Find(node);
  return n ? n->used.units("nvidia.com/gpu") : -1;
}

// A pod any user may create: the API server stores "1e16" as "10e15", and accepts int64's maximum.
nlohmann::json PoisonPod(const std::string& name, const std::string& quantity) {
  nlohmann::json pod = MakeGpuPod("attacker", name, "uid-" + name, "", 1, "Pending");
  auto& resources = pod["spec"]["containers"][0]["resources"];
  resources["requests"]["example.com/foo"] = quantity;
  resources["limits"]["example.com/foo"] = quantity;
  return pod;
}

// Issue #25: one such pod made the pod watch fail on its event and restart at the same version
// for ever (the inventory silently stale), and after a relist the initial list never completed.
TEST(LiveInventory, pods_with_huge_whole_quantities_or_undecodable_fields_poison_nothing) {
  FakeApiServer server;
  Populate(server, 2, 0);
  server.UpsertPod(PoisonPod("huge", "10e15"));
  server.UpsertPod(PoisonPod("max", "9223372036854775807"));
  nlohmann::json broken = MakeGpuPod("attacker", "broken", "uid-broken", "node-0", 2);
  broken["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "two";
  server.UpsertPod(broken);
  nlohmann::json wrong_shape = MakeGpuPod("attacker", "shape", "uid-shape", "node-0", 2);
  wrong_shape["spec"]["containers"] = "not a list";
  server.UpsertPod(wrong_shape);
  server.UpsertPod(MakeGpuPod("ns", "good", "uid-good", "node-0", 3));

  Published<ClusterSnapshot> published;
  LiveInventory inventory(ConfigFor(server), GpuResourceNames(), published, FastOptions());
  ASSERT_TRUE(Eventually([&] { return inventory.Status().synced; })) << inventory.Status().detail;
  EXPECT_EQ(GpusUsed(published, "node-0"), 3);
  EXPECT_EQ(inventory.Status().gpu_pods, 3u);  // good, huge and max; the two bad ones skipped
  EXPECT_EQ(inventory.pod_skips().invalid + inventory.pod_skips().malformed, 2u);

  // The watch goes on past new bad events: a pod bound afterwards is counted.
  uint64_t restarts = inventory.watch_restarts();
  server.UpsertPod(PoisonPod("huge-2", "10e15"));
  broken["metadata"]["name"] = "broken-2";
  broken["metadata"]["uid"] = "uid-broken-2";
  server.UpsertPod(broken);
  server.UpsertPod(MakeGpuPod("ns", "bound-later", "uid-later", "node-1", 8));
  ASSERT_TRUE(Eventually([&] { return GpusUsed(published, "node-1") == 8; }));
  EXPECT_EQ(inventory.pod_skips().invalid + inventory.pod_skips().malformed, 3u);
  EXPECT_EQ(inventory.watch_restarts(), restarts);
  EXPECT_TRUE(inventory.Status().synced);
  // A deletion needs only the identity, so even an undecodable pod leaves.
  server.DeletePod("attacker", "broken-2");
  server.DeletePod("ns", "good");
  ASSERT_TRUE(Eventually([&] { return GpusUsed(published, "node-0") == 0; }));
}

TEST(LiveInventory, a_list_or_watch_that_keeps_failing_makes_the_inventory_unready) {
  FakeApiServer server;
  Populate(server, 2, 2);
  LiveInventoryOptions options = FastOptions();
  options.reflector.watch_timeout = std::chrono::seconds(1);
  options.stale_after = 2500ms;
  Published<ClusterSnapshot> published;
  LiveInventory inventory(ConfigFor(server), GpuResourceNames(), published, options);
  ASSERT_TRUE(Eventually([&] { return inventory.Status().synced; }));
  // A quiet, healthy cluster stays ready: each watch ending on time is progress.
  std::this_thread::sleep_for(3500ms);
  EXPECT_TRUE(inventory.Status().synced) << inventory.Status().detail;
  // Every request fails from now on (RBAC revoked, say): contact, but no progress.
  server.FailNextRequests(1000000, 500);
  server.CloseWatches();
  ASSERT_TRUE(Eventually([&] { return !inventory.Status().synced; }));
  EXPECT_TRUE(inventory.Status().stale);
  EXPECT_NE(inventory.Status().detail.find("made no progress"), std::string::npos)
      << inventory.Status().detail;
  server.ClearFaults();
  ASSERT_TRUE(Eventually([&] { return inventory.Status().synced; }));
}

// Issue #37 case 5: a watch that ends at once (410, an unknown type, nothing, no JSON) was opened
// again ~700 times a second. Counted, not timed: two reflectors each wait 50-100, 100-200,
// 200-400 and 400-800 ms between tries, so a 1.5 s window holds at most 5 tries (a list and a
// watch for 410) of each, however fast the machine.
TEST(LiveInventory, a_watch_that_ends_at_once_backs_off_however_it_ends) {
  for (std::string answer :
       {std::string(R"({"type":"ERROR","object":{"kind":"Status","code":410}})") + "\n",
        std::string(R"({"type":"SURPRISE","object":{"metadata":{"name":"x"}}})") + "\n",
        std::string(), std::string("<html>not json\n")}) {
    FakeApiServer server;
    server.UpsertNode(MakeGpuNode("node-0", 8, "NVIDIA-H100-80GB-HBM3"));
    server.SetWatchAnswer(answer);
    LiveInventoryOptions o = FastOptions();
    o.reflector.backoff_initial = 100ms;
    o.reflector.backoff_max = 30000ms;
    Published<ClusterSnapshot> published;
    LiveInventory inventory(ConfigFor(server), GpuResourceNames(), published, o);
    std::this_thread::sleep_for(1500ms);
    uint64_t requests = server.lists_served() + server.watches_served();
    EXPECT_LE(requests, 2u * 2u * 5u) << answer;
    EXPECT_GE(server.watches_served(), 2u) << answer;
  }
}

// Issue #37 case 4: a list whose every page carries a continue token grew without bound while
// /readyz said 503. Now it is abandoned at its page or object bound, counted, and never synced.
TEST(LiveInventory, a_list_that_never_ends_is_abandoned_and_never_ready) {
  for (bool by_objects : {false, true}) {
    FakeApiServer server;
    for (int i = 0; i < 10; ++i) {
      std::string name = std::to_string(i);
      server.UpsertNode(MakeGpuNode("node-" + name, 8, "NVIDIA-H100-80GB-HBM3"));
      server.UpsertPod(
          MakeGpuPod("ns", "pod-" + name, "uid-" + name, "node-" + name, 1, "Running"));
    }
    server.SetEndlessLists(true);
    LiveInventoryOptions o = FastOptions();
    o.reflector.watch_list = false;
    o.reflector.max_list_pages = by_objects ? 1000 : 20;
    o.reflector.max_list_objects = by_objects ? 30 : 1000000;
    Published<ClusterSnapshot> published;
    LiveInventory inventory(ConfigFor(server), GpuResourceNames(), published, o);
    ASSERT_TRUE(Eventually([&] { return inventory.lists_abandoned() >= 4; }));
    EXPECT_FALSE(inventory.Status().synced);
    EXPECT_EQ(inventory.lists(), 0u);
    // Pages a list may ask for: 20, or the 9 that pass 30 objects (7, then the last 3 again).
    uint64_t per_list = by_objects ? 9 : 20;
    EXPECT_LE(server.lists_served(), (inventory.lists_abandoned() + 2) * per_list);
  }
}

// A watch-list's initial events count against the list's object bound as a paged list's items do.
TEST(LiveInventory, a_watch_list_past_the_object_bound_is_abandoned_and_never_ready) {
  FakeApiServer server;
  Populate(server, 10, 40);
  LiveInventoryOptions o = FastOptions();
  o.reflector.max_list_objects = 30;
  Published<ClusterSnapshot> published;
  LiveInventory inventory(ConfigFor(server), GpuResourceNames(), published, o);
  ASSERT_TRUE(Eventually([&] { return inventory.lists_abandoned() >= 2; }));
  EXPECT_FALSE(inventory.Status().synced);
  EXPECT_EQ(server.lists_served(), 0u);  // abandoned, not refused: no fallback to pages
}

// A refused watch-list is not the kind's first attempt: until the paged list after it has been
// answered, the reflector says it has not tried (the inventory waits for every DRA kind's first
// try before its first complete snapshot).
TEST(LiveInventory, a_refused_watch_list_is_no_attempt_until_the_pages_are_tried) {
  struct Ignore : ReflectorSink {
    void BeginList() override {}
    void AddListed(simdjson::ondemand::object) override {}
    void EndList() override {}
    void Apply(std::string_view, simdjson::ondemand::object) override {}
  } sink;
  FakeApiServer server;
  Populate(server, 2, 2);
  server.SetWatchListAnswer(FakeApiServer::WatchListAnswer::kInvalid);
  server.SetDelay(300ms);  // every answer, so the list comes well after the refusal
  Reflector reflector("/api/v1/nodes", ConfigFor(server), sink, FastOptions().reflector, 1);
  bool early = false;
  while (!reflector.synced() && !early) {
    early = reflector.attempted() && server.lists_served() == 0;
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_FALSE(early) << "attempted before any page was asked for";
  EXPECT_TRUE(reflector.attempted());
  EXPECT_TRUE(reflector.watch_list_refused());
}

}  // namespace
}  // namespace gpusched::live_inventory_test
