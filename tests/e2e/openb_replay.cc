// openb_replay: a slice of the Alibaba openb trace, replayed through a real kube-apiserver and
// kube-scheduler (issue #29), so the field's packing can be set beside `gpusched simulate`'s on the
// very same node and pod CSVs.
//
//   slice --nodes-csv F --pods-csv F --nodes N --seed S --out-nodes F --out-pods F
//       N GPU nodes drawn from the node list, stratified by model (each model keeps its share of
//       the list, largest remainders first), and the pod list's CPU-only and whole-GPU pods in the
//       list's order (the openb lists are in creation order) until they ask for exactly the
//       sampled GPUs: a GPU pod larger than what is left is skipped. Both are written as openb
//       CSVs.
//   create-nodes --kubeconfig F --nodes F
//       One fake Node per row: hostname, nvidia.com/gpu.product (the openb model, as the simulator
//       names it) and nvidia.com/gpu.count labels; cpu, memory, 110 pods and nvidia.com/gpu
//       allocatable; Ready.
//   replay --kubeconfig F --nodes F --pods F --arrival one-by-one|burst [--burst-size K]
//       Creates the pods (cpu and memory requests, nvidia.com/gpu limits) one by one, each waited
//       for until bound or found unschedulable, or K at a time, each burst waited for whole. A pod
//       found unschedulable is deleted and counted failed. Prints one line of key=value figures.
//   create-pods --kubeconfig F --pods F [--gpu-scheduler NAME], then await --kubeconfig F --nodes F
//       A backlog: every pod created while no scheduler runs (GPU pods with schedulerName NAME when
//       given, as a second scheduler's users write them), then (once the test has started one)
//       waited for until each is bound or unschedulable. Prints the same line plus the binds per
//       second between the first and the last PodScheduled transition: kube-scheduler's own pace,
//       free of how fast one client can create pods.
//   clean --kubeconfig F
//       Deletes every pod of namespace default and every node, and waits until they are gone.
//
// Inputs are hostile: the CSVs go through the simulator's bounded parser, an API answer larger
// than kMaxBodyBytes is refused, and every wait has a deadline. One connection serves every call.
#include <curl/curl.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gpusched/kube/api_query.h"
#include "gpusched/kube/kube_config.h"
#include "gpusched/sim/openb_trace.h"
#include "gpusched/sim/workload.h"

namespace gpusched {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr size_t kMaxBodyBytes = size_t{64} << 20;
constexpr auto kPodDecisionDeadline = std::chrono::seconds(60);
constexpr auto kBurstDecisionDeadline = std::chrono::seconds(180);
constexpr auto kCleanDeadline = std::chrono::seconds(60);
constexpr auto kPodPollInterval = std::chrono::milliseconds(5);
constexpr auto kBurstPollInterval = std::chrono::milliseconds(50);
// A backlog is polled rarely and through its unbound pods only, so the polls take little of the
// API server's CPU from the scheduler being measured (a full list of 2,000 pods costs it about
// 90 ms; the bind times come from the pods, not from the polls).
constexpr auto kBacklogPollInterval = std::chrono::seconds(1);
constexpr const char* kUnboundPodsPage =
    "/api/v1/namespaces/default/pods?fieldSelector=spec.nodeName%3D&limit=200";
constexpr const char* kPods = "/api/v1/namespaces/default/pods";
constexpr const char* kGpu = "nvidia.com/gpu";

struct Reply {
  long status = 0;
  std::string body;
};

// One kept-alive HTTPS connection to the API server, with the kubeconfig's CA and client
// certificate (the stack's admin kubeconfig; bearer tokens are not read).
class Api {
 public:
  explicit Api(const std::string& kubeconfig) : config_(LoadKubeconfig(kubeconfig)) {
    curl_ = curl_easy_init();
    if (curl_ == nullptr) throw std::runtime_error("curl_easy_init failed");
    headers_ = curl_slist_append(headers_, "Content-Type: application/json");
    headers_ = curl_slist_append(headers_, "Accept: application/json");
    curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers_);
    if (!config_.ca_pem.empty()) SetBlob(CURLOPT_CAINFO_BLOB, config_.ca_pem);
    if (!config_.client_cert_pem.empty()) SetBlob(CURLOPT_SSLCERT_BLOB, config_.client_cert_pem);
    if (!config_.client_key_pem.empty()) SetBlob(CURLOPT_SSLKEY_BLOB, config_.client_key_pem);
    curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl_, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(curl_, CURLOPT_TIMEOUT, 60L);
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, Append);
  }
  ~Api() {
    curl_slist_free_all(headers_);
    curl_easy_cleanup(curl_);
  }
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  Reply Call(const char* method, const std::string& path, const std::string& body = "") {
    Prepare(method, path, body);
    Reply reply;
    curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &reply.body);
    CURLcode code = curl_easy_perform(curl_);
    if (code != CURLE_OK)
      throw std::runtime_error(std::string(method) + " " + path + ": " + curl_easy_strerror(code));
    curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &reply.status);
    return reply;
  }

  // The call's JSON answer; any status but `expected` is an error naming the call.
  json Expect(long expected, const char* method, const std::string& path,
              const std::string& body = "") {
    Reply reply = Call(method, path, body);
    if (reply.status != expected) {
      throw std::runtime_error(std::string(method) + " " + path + ": HTTP " +
                               std::to_string(reply.status) + ": " + reply.body.substr(0, 300));
    }
    return json::parse(reply.body);
  }

 private:
  static size_t Append(char* data, size_t size, size_t count, void* out) {
    auto* body = static_cast<std::string*>(out);
    if (body->size() + size * count > kMaxBodyBytes) return 0;  // curl fails the transfer
    body->append(data, size * count);
    return size * count;
  }

  void SetBlob(CURLoption option, const std::string& pem) {
    curl_blob blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
    curl_easy_setopt(curl_, option, &blob);
  }

  void Prepare(const char* method, const std::string& path, const std::string& body) {
    curl_easy_setopt(curl_, CURLOPT_URL, (config_.server + path).c_str());
    if (body.empty()) {
      curl_easy_setopt(curl_, CURLOPT_HTTPGET, 1L);
    } else {
      curl_easy_setopt(curl_, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
      curl_easy_setopt(curl_, CURLOPT_COPYPOSTFIELDS, body.c_str());
    }
    curl_easy_setopt(curl_, CURLOPT_CUSTOMREQUEST, method);
  }

  KubeConfig config_;
  CURL* curl_ = nullptr;
  curl_slist* headers_ = nullptr;
};

// --- flags ---------------------------------------------------------------------------------------

using Flags = std::map<std::string, std::string>;

Flags ParseFlags(int argc, char** argv, const std::vector<std::string>& known) {
  Flags flags;
  for (int i = 2; i < argc; i += 2) {
    std::string name = argv[i];
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw std::runtime_error("unknown flag " + name);
    if (i + 1 >= argc) throw std::runtime_error(name + " needs a value");
    flags[name] = argv[i + 1];
  }
  return flags;
}

const std::string& Required(const Flags& flags, const std::string& name) {
  auto it = flags.find(name);
  if (it == flags.end()) throw std::runtime_error("missing " + name);
  return it->second;
}

int64_t Number(const Flags& flags, const std::string& name, int64_t fallback, int64_t min,
               int64_t max) {
  auto it = flags.find(name);
  if (it == flags.end()) return fallback;
  int64_t v = 0;
  auto [end, error] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
  if (error != std::errc() || end != it->second.data() + it->second.size() || v < min || v > max)
    throw std::runtime_error(name + " must be a whole number in " + std::to_string(min) + ".." +
                             std::to_string(max));
  return v;
}

// --- slice ---------------------------------------------------------------------------------------

// `want` nodes, each model keeping its share (largest remainders get the leftover seats), drawn
// at random within the model; returned in the list's order.
std::vector<TraceNode> SampleNodes(const std::vector<TraceNode>& all, size_t want, uint64_t seed) {
  std::map<std::string, std::vector<size_t>> by_model;
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].gpus > 0) by_model[all[i].model].push_back(i);
  size_t gpu_nodes = 0;
  for (const auto& [model, rows] : by_model) gpu_nodes += rows.size();
  if (want == 0 || want > gpu_nodes)
    throw std::runtime_error("--nodes must be 1.." + std::to_string(gpu_nodes));

  std::map<std::string, size_t> seats;
  std::vector<std::pair<double, std::string>> remainders;
  size_t given = 0;
  for (const auto& [model, rows] : by_model) {
    double share = static_cast<double>(want) * static_cast<double>(rows.size()) / gpu_nodes;
    seats[model] = static_cast<size_t>(share);
    given += seats[model];
    remainders.emplace_back(share - static_cast<double>(seats[model]), model);
  }
  std::sort(remainders.rbegin(), remainders.rend());
  for (size_t i = 0; given < want; ++i, ++given) ++seats[remainders[i].second];

  SimRandom random(seed);
  std::vector<size_t> picked;
  for (auto& [model, rows] : by_model) {
    for (size_t i = rows.size(); i > 1; --i) std::swap(rows[i - 1], rows[random.Below(i)]);
    picked.insert(picked.end(), rows.begin(), rows.begin() + static_cast<long>(seats[model]));
  }
  std::sort(picked.begin(), picked.end());
  std::vector<TraceNode> nodes;
  for (size_t i : picked) nodes.push_back(all[i]);
  return nodes;
}

// CPU-only and whole-GPU pods in the list's order until they ask for `gpus` GPUs in all.
std::vector<TracePod> TakePods(const std::vector<TracePod>& all, int64_t gpus) {
  std::vector<TracePod> pods;
  int64_t left = gpus;
  for (const auto& p : all) {
    if (left == 0) break;
    if (p.num_gpu > 0 && p.gpu_milli != 1000) continue;  // a fractional share
    if (p.num_gpu > left) continue;
    left -= p.num_gpu;
    pods.push_back(p);
  }
  return pods;
}

void WriteFile(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) throw std::runtime_error("cannot write " + path);
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) throw std::runtime_error("cannot write " + path);
}

int Slice(const Flags& flags) {
  auto nodes = SampleNodes(LoadOpenbNodes(Required(flags, "--nodes-csv")),
                           static_cast<size_t>(Number(flags, "--nodes", 0, 1, 100000)),
                           static_cast<uint64_t>(Number(flags, "--seed", 1, 0, INT64_MAX)));
  int64_t gpus = 0;
  std::string node_csv = "sn,cpu_milli,memory_mib,gpu,model\n";
  for (const auto& n : nodes) {
    gpus += n.gpus;
    node_csv += n.name + "," + std::to_string(n.cpu_milli) + "," + std::to_string(n.memory_mib) +
                "," + std::to_string(n.gpus) + "," + n.model + "\n";
  }
  auto pods = TakePods(LoadOpenbPods(Required(flags, "--pods-csv")), gpus);
  std::string pod_csv = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n";
  for (const auto& p : pods) {
    pod_csv += p.name + "," + std::to_string(p.cpu_milli) + "," + std::to_string(p.memory_mib) +
               "," + std::to_string(p.num_gpu) + "," + std::to_string(p.gpu_milli) + "\n";
  }
  WriteFile(Required(flags, "--out-nodes"), node_csv);
  WriteFile(Required(flags, "--out-pods"), pod_csv);
  std::cout << "nodes=" << nodes.size() << " gpus=" << gpus << " pods=" << pods.size() << "\n";
  return 0;
}

// --- nodes ---------------------------------------------------------------------------------------

json NodeObject(const TraceNode& n) {
  json resources = {{"cpu", std::to_string(n.cpu_milli) + "m"},
                    {"memory", std::to_string(n.memory_mib) + "Mi"},
                    {"pods", "110"},
                    {kGpu, std::to_string(n.gpus)}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", n.name},
            {"labels",
             {{"kubernetes.io/hostname", n.name},
              {"nvidia.com/gpu.product", n.model},
              {"nvidia.com/gpu.count", std::to_string(n.gpus)}}}}},
          {"status",
           {{"capacity", resources},
            {"allocatable", resources},
            {"conditions",
             {{{"type", "Ready"},
               {"status", "True"},
               {"reason", "KubeletReady"},
               {"message", "fake"}}}}}}};
}

int CreateNodes(const Flags& flags) {
  Api api(Required(flags, "--kubeconfig"));
  auto nodes = LoadOpenbNodes(Required(flags, "--nodes"));
  for (const auto& n : nodes) api.Expect(201, "POST", "/api/v1/nodes", NodeObject(n).dump());
  std::cout << "nodes=" << nodes.size() << "\n";
  return 0;
}

// --- pods ----------------------------------------------------------------------------------------

json PodObject(const TracePod& p) {
  json container = {{"name", "c"}, {"image", "registry.k8s.io/pause:3.9"}};
  container["resources"]["requests"] = {{"cpu", std::to_string(p.cpu_milli) + "m"},
                                        {"memory", std::to_string(p.memory_mib) + "Mi"}};
  if (p.num_gpu > 0) container["resources"]["limits"] = {{kGpu, std::to_string(p.num_gpu)}};
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", p.name}, {"namespace", "default"}}},
          {"spec", {{"terminationGracePeriodSeconds", 0}, {"containers", {container}}}}};
}

enum class Fate { kPending, kBound, kUnschedulable };

// Bound once spec.nodeName is set; unschedulable once its PodScheduled condition says False
// (Unschedulable, or SchedulerError when an extender call failed).
Fate FateOf(const json& pod) {
  if (!pod["spec"].value("nodeName", "").empty()) return Fate::kBound;
  for (const auto& c : pod["status"].value("conditions", json::array())) {
    if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False")
      return Fate::kUnschedulable;
  }
  return Fate::kPending;
}

struct Tally {
  int placed = 0;
  int failed = 0;
};

void Forget(Api& api, const std::string& name) {
  Reply r = api.Call("DELETE", std::string(kPods) + "/" + name + "?gracePeriodSeconds=0");
  if (r.status != 200 && r.status != 404)
    throw std::runtime_error("DELETE pod " + name + ": HTTP " + std::to_string(r.status));
}

void Settle(Api& api, const std::string& name, Fate fate, Tally& tally) {
  if (fate == Fate::kBound) {
    ++tally.placed;
  } else {
    ++tally.failed;
    Forget(api, name);
  }
}

void OneByOne(Api& api, const std::vector<TracePod>& pods, Tally& tally) {
  for (const auto& p : pods) {
    api.Expect(201, "POST", kPods, PodObject(p).dump());
    auto deadline = Clock::now() + kPodDecisionDeadline;
    Fate fate = Fate::kPending;
    while ((fate = FateOf(api.Expect(200, "GET", std::string(kPods) + "/" + p.name))) ==
           Fate::kPending) {
      if (Clock::now() > deadline) throw std::runtime_error("pod " + p.name + " undecided");
      std::this_thread::sleep_for(kPodPollInterval);
    }
    Settle(api, p.name, fate, tally);
  }
}

// Waits until every pod of the burst (labelled with its number) is bound or unschedulable.
void AwaitBurst(Api& api, int burst, size_t size, Tally& tally) {
  std::string list = std::string(kPods) + "?labelSelector=openb-burst%3D" + std::to_string(burst);
  auto deadline = Clock::now() + kBurstDecisionDeadline;
  while (true) {
    json items = api.Expect(200, "GET", list)["items"];
    size_t pending = 0;
    for (const auto& pod : items) pending += FateOf(pod) == Fate::kPending;
    if (pending == 0 && items.size() == size) {
      for (const auto& pod : items) Settle(api, pod["metadata"]["name"], FateOf(pod), tally);
      return;
    }
    if (Clock::now() > deadline)
      throw std::runtime_error("burst " + std::to_string(burst) + ": pods undecided");
    std::this_thread::sleep_for(kBurstPollInterval);
  }
}

void Bursts(Api& api, const std::vector<TracePod>& pods, size_t burst_size, Tally& tally) {
  for (size_t start = 0, burst = 0; start < pods.size(); start += burst_size, ++burst) {
    size_t end = std::min(pods.size(), start + burst_size);
    for (size_t i = start; i < end; ++i) {
      json pod = PodObject(pods[i]);
      pod["metadata"]["labels"]["openb-burst"] = std::to_string(burst);
      api.Expect(201, "POST", kPods, pod.dump());
    }
    AwaitBurst(api, static_cast<int>(burst), end - start, tally);
  }
}

// GPUs (nvidia.com/gpu limits) of the pods bound now, counted from the API server.
int64_t AllocatedGpus(Api& api) {
  int64_t gpus = 0;
  json list = api.Expect(200, "GET", kPods);  // a range-for over a temporary's member would dangle
  for (const auto& pod : list["items"]) {
    if (FateOf(pod) != Fate::kBound) continue;
    for (const auto& c : pod["spec"]["containers"]) {
      const json& limits = c["resources"].value("limits", json::object());
      if (limits.contains(kGpu)) gpus += std::stoll(limits[kGpu].get<std::string>());
    }
  }
  return gpus;
}

int64_t GpuCapacity(const std::string& node_csv) {
  int64_t gpus = 0;
  for (const auto& n : LoadOpenbNodes(node_csv)) gpus += n.gpus;
  return gpus;
}

void Report(Api& api, int64_t capacity, const Tally& tally, double seconds) {
  int64_t allocated = AllocatedGpus(api);
  std::printf(
      "allocated_gpus=%lld capacity_gpus=%lld allocated_pct=%.2f placed=%d failed=%d "
      "seconds=%.1f pods_per_s=%.1f",
      static_cast<long long>(allocated), static_cast<long long>(capacity),
      capacity > 0 ? 100.0 * static_cast<double>(allocated) / capacity : 0.0, tally.placed,
      tally.failed, seconds, (tally.placed + tally.failed) / seconds);
}

int Replay(const Flags& flags) {
  Api api(Required(flags, "--kubeconfig"));
  auto pods = LoadOpenbPods(Required(flags, "--pods"));
  const std::string& arrival = Required(flags, "--arrival");
  Tally tally;
  auto start = Clock::now();
  if (arrival == "one-by-one") {
    OneByOne(api, pods, tally);
  } else if (arrival == "burst") {
    Bursts(api, pods, static_cast<size_t>(Number(flags, "--burst-size", 100, 1, 100000)), tally);
  } else {
    throw std::runtime_error("--arrival must be one-by-one or burst");
  }
  Report(api, GpuCapacity(Required(flags, "--nodes")), tally,
         std::chrono::duration<double>(Clock::now() - start).count());
  std::printf("\n");
  return 0;
}

int CreatePods(const Flags& flags) {
  Api api(Required(flags, "--kubeconfig"));
  auto pods = LoadOpenbPods(Required(flags, "--pods"));
  auto gpu_scheduler = flags.find("--gpu-scheduler");
  for (const auto& p : pods) {
    json pod = PodObject(p);
    if (gpu_scheduler != flags.end() && p.num_gpu > 0)
      pod["spec"]["schedulerName"] = gpu_scheduler->second;
    api.Expect(201, "POST", kPods, pod.dump());
  }
  std::cout << "pods=" << pods.size() << "\n";
  return 0;
}

// Seconds since the epoch of an RFC 3339 time in UTC ("2026-11-25T08:43:52Z"); -1 if malformed.
int64_t EpochSeconds(const std::string& text) {
  std::tm t{};
  char zone = 0;
  if (std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%d%c", &t.tm_year, &t.tm_mon, &t.tm_mday,
                  &t.tm_hour, &t.tm_min, &t.tm_sec, &zone) != 7 ||
      zone != 'Z')
    return -1;
  t.tm_year -= 1900;
  t.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&t));
}

// When kube-scheduler bound the pod: its PodScheduled condition's transition (whole seconds).
int64_t BoundAt(const json& pod) {
  for (const auto& c : pod["status"].value("conditions", json::array())) {
    if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "True")
      return EpochSeconds(c.value("lastTransitionTime", ""));
  }
  return -1;
}

// Whether a pod is still waiting for the scheduler's first decision: the unbound pods, a page at a
// time until one is found.
bool AnyPending(Api& api) {
  std::string next;
  do {
    std::string path = kUnboundPodsPage;
    if (!next.empty()) path += "&continue=" + UrlEncode(next);
    json page = api.Expect(200, "GET", path);
    for (const auto& pod : page["items"]) {
      if (FateOf(pod) == Fate::kPending) return true;
    }
    next = page["metadata"].value("continue", "");
  } while (!next.empty());
  return false;
}

int Await(const Flags& flags) {
  Api api(Required(flags, "--kubeconfig"));
  auto start = Clock::now();
  auto deadline = start + kBurstDecisionDeadline;
  do {
    if (Clock::now() > deadline) throw std::runtime_error("pods undecided");
    std::this_thread::sleep_for(kBacklogPollInterval);
  } while (AnyPending(api));
  json items = api.Expect(200, "GET", kPods)["items"];
  Tally tally;
  int64_t first = INT64_MAX, last = -1;
  for (const auto& pod : items) {
    bool bound = FateOf(pod) == Fate::kBound;
    ++(bound ? tally.placed : tally.failed);
    if (!bound) continue;
    first = std::min(first, BoundAt(pod));
    last = std::max(last, BoundAt(pod));
  }
  Report(api, GpuCapacity(Required(flags, "--nodes")), tally,
         std::chrono::duration<double>(Clock::now() - start).count());
  double span = last > first ? static_cast<double>(last - first) : 0.0;
  std::printf(" bind_span_s=%.0f binds_per_s=%.1f\n", span,
              span > 0 ? (tally.placed - 1) / span : 0.0);
  return 0;
}

// --- clean ---------------------------------------------------------------------------------------

int Clean(const Flags& flags) {
  Api api(Required(flags, "--kubeconfig"));
  api.Expect(200, "DELETE", std::string(kPods) + "?gracePeriodSeconds=0");
  api.Expect(200, "DELETE", "/api/v1/nodes");
  auto deadline = Clock::now() + kCleanDeadline;
  while (!api.Expect(200, "GET", std::string(kPods) + "?limit=1")["items"].empty() ||
         !api.Expect(200, "GET", "/api/v1/nodes?limit=1")["items"].empty()) {
    if (Clock::now() > deadline) throw std::runtime_error("pods or nodes not gone");
    std::this_thread::sleep_for(kBurstPollInterval);
  }
  return 0;
}

int Main(int argc, char** argv) {
  std::string command = argc > 1 ? argv[1] : "";
  if (command == "slice") {
    return Slice(ParseFlags(
        argc, argv,
        {"--nodes-csv", "--pods-csv", "--nodes", "--seed", "--out-nodes", "--out-pods"}));
  }
  if (command == "create-nodes")
    return CreateNodes(ParseFlags(argc, argv, {"--kubeconfig", "--nodes"}));
  if (command == "replay") {
    return Replay(
        ParseFlags(argc, argv, {"--kubeconfig", "--nodes", "--pods", "--arrival", "--burst-size"}));
  }
  if (command == "create-pods")
    return CreatePods(ParseFlags(argc, argv, {"--kubeconfig", "--pods", "--gpu-scheduler"}));
  if (command == "await") return Await(ParseFlags(argc, argv, {"--kubeconfig", "--nodes"}));
  if (command == "clean") return Clean(ParseFlags(argc, argv, {"--kubeconfig"}));
  std::cerr << "usage: openb_replay slice|create-nodes|replay|create-pods|await|clean [flags] (see "
               "the source's top comment)\n";
  return 2;
}

}  // namespace
}  // namespace gpusched

int main(int argc, char** argv) {
  try {
    return gpusched::Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "openb_replay: " << e.what() << "\n";
    return 1;
  }
}
