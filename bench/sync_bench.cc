// sync_bench: how fast the live inventory syncs from the API server, and how much memory it takes.
//
//   build/bench/sync_bench [--nodes 15000] [--pods 150000]
//
// Phase 1 starts the fake API server as a separate process (so its memory is not counted) with a
// synthetic cluster of realistic object sizes, then times LiveInventory from start to a published
// snapshot holding every node, and reports this process's peak RSS.
// Phase 2 measures watch events applied per second: the client is kept away while the server
// records a burst of pod events, then it resumes its watch and replays the whole burst.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include <spdlog/spdlog.h>
#include "gpusched/cli/flag_values.h"
#include "gpusched/cli/flags.h"

#include "gpusched/kube/live_inventory.h"
#include "testing/fake_apiserver.h"

namespace {

using namespace gpusched;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

long PeakRssMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

// CPU seconds (user + system) of this process (`who` RUSAGE_SELF: the client, gpusched's
// inventory) or of its waited-for children (RUSAGE_CHILDREN: the fake API server).
double CpuSeconds(int who) {
  rusage usage{};
  getrusage(who, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// Minor page faults of this process so far: on a virtual machine each one costs tens of
// microseconds of system time, so they show where gpusched's CPU goes during a sync.
long MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// System CPU seconds of this process so far.
double SystemSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_stime.tv_sec) + usage.ru_stime.tv_usec / 1e6;
}

// This process's resident set now (VmRSS), in MiB; -1 when /proc does not say.
long CurrentRssMiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmRSS:")) return std::stol(line.substr(6)) / 1024;
  }
  return -1;
}

// Starts the fake API server process and waits until it prints its ready line.
pid_t StartFakeServer(int nodes, int pods, int port, const std::string& kubeconfig) {
  int out[2];
  if (pipe(out) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    std::string n = std::to_string(nodes), p = std::to_string(pods), port_s = std::to_string(port);
    execl(FAKE_APISERVER_BINARY, FAKE_APISERVER_BINARY, "--synthetic-nodes", n.c_str(),
          "--synthetic-pods", p.c_str(), "--port", port_s.c_str(), "--kubeconfig-out",
          kubeconfig.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  char buf[512];
  ssize_t got = read(out[0], buf, sizeof buf - 1);  // blocks until the server is up
  close(out[0]);
  if (got <= 0) return -1;
  buf[got] = '\0';
  std::fprintf(stderr, "%s", buf);
  return pid;
}

template <class F>
bool WaitUntil(F done, std::chrono::seconds limit) {
  auto deadline = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

void InitialSync(int nodes, int pods, bool watch_list) {
  std::string kubeconfig = std::filesystem::temp_directory_path() / "sync-bench.kubeconfig";
  int port = 20000 + static_cast<int>(getpid() % 10000);
  pid_t server = StartFakeServer(nodes, pods, port, kubeconfig);
  if (server < 0) {
    std::fprintf(stderr, "cannot start %s\n", FAKE_APISERVER_BINARY);
    return;
  }
  long rss_before = PeakRssMiB();
  const double cpu_before = CpuSeconds(RUSAGE_SELF);
  const double system_before = SystemSeconds();
  const long faults_before = MinorFaults();
  Published<ClusterSnapshot> published;
  auto start = Clock::now();
  double took = 0;
  double client_cpu = 0;
  double client_system = 0;
  long client_faults = 0;
  bool ok = false;
  size_t gpu_pods = 0;
  long rss_synced = -1;
  {
    LiveInventoryOptions options;
    options.reflector.watch_list = watch_list;
    LiveInventory inventory(LoadKubeconfig(kubeconfig), GpuResourceNames(), published, options);
    ok = WaitUntil(
        [&] {
          return inventory.Status().synced && published.Get()->size() == static_cast<size_t>(nodes);
        },
        std::chrono::seconds(600));
    took = Seconds(Clock::now() - start);
    client_cpu = CpuSeconds(RUSAGE_SELF) - cpu_before;
    client_system = SystemSeconds() - system_before;
    client_faults = MinorFaults() - faults_before;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the counters publish
    gpu_pods = inventory.Status().gpu_pods;
    rss_synced = CurrentRssMiB();
  }
  kill(server, SIGTERM);
  waitpid(server, nullptr, 0);
  // The server's CPU covers its start (generating the objects) too: all of it is the server's.
  std::printf(
      "| initial sync (%s) | %d nodes, %d pods (%zu GPU pods among them) | %.2f s | peak RSS %ld "
      "MiB "
      "(%ld MiB before), %ld MiB once synced; CPU: gpusched %.2f s (system %.2f s, %ld page "
      "faults), the fake API server %.2f s |%s\n",
      watch_list ? "watch-list" : "pages", nodes, pods, gpu_pods, took, PeakRssMiB(), rss_before,
      rss_synced, client_cpu, client_system, client_faults, CpuSeconds(RUSAGE_CHILDREN),
      ok ? "" : " TIMED OUT");
  std::filesystem::remove(kubeconfig);
}

void EventRate(int events) {
  testing::FakeApiServer server;
  for (int i = 0; i < 500; ++i) server.UpsertNode(testing::MakeGpuNode("n" + std::to_string(i), 8));
  KubeConfig config;
  config.server = server.url();
  config.token = testing::FakeApiServer::kToken;
  LiveInventoryOptions options;
  options.reflector.backoff_initial = std::chrono::milliseconds(1);
  options.reflector.backoff_max = std::chrono::milliseconds(5);
  Published<ClusterSnapshot> published;
  LiveInventory inventory(config, GpuResourceNames(), published, options);
  WaitUntil([&] { return inventory.Status().synced; }, std::chrono::seconds(60));
  // Keep the client off while the burst is recorded, then let it replay the burst.
  server.FailNextRequests(1 << 30, 503);
  server.CloseWatches();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  for (int i = 0; i < events; ++i) {
    server.UpsertPod(testing::MakeGpuPod("ns", "p" + std::to_string(i), "u" + std::to_string(i),
                                         "n" + std::to_string(i % 500), 1));
  }
  auto start = Clock::now();
  server.ClearFaults();
  server.FailNextRequests(0, 503);
  bool ok = WaitUntil([&] { return inventory.Status().gpu_pods == static_cast<size_t>(events); },
                      std::chrono::seconds(300));
  double took = Seconds(Clock::now() - start);
  std::printf(
      "| watch replay | %d pod ADDED events over one watch stream | %.2f s | %.0f events/s |%s\n",
      events, took, events / took, ok ? "" : " TIMED OUT");
}

}  // namespace

int main(int argc, char** argv) {
  FlagSet flags("sync_bench", "sync_bench [flags]",
                "Initial-sync time, peak RSS and watch event rate of the live inventory.");
  flags.Add({"nodes", "N", "15000", "nodes in the synthetic cluster"})
      .Add({"pods", "N", "150000", "pods in the synthetic cluster (60% ask for GPUs)"})
      .Add({"events", "N", "50000", "pod events in the watch-rate phase"})
      .Add({"watch-list", "BOOL", "true",
            "initial sync as a watch-list (false: in pages, as from a server without it)"});
  if (Problems problems = flags.Parse(std::vector<std::string>(argv + 1, argv + argc));
      !problems.empty()) {
    std::fprintf(stderr, "sync_bench: %s\n", problems.lines()[0].c_str());
    return 2;
  }
  if (flags.help_requested()) {
    std::printf("%s", flags.Help().c_str());
    return 0;
  }
  spdlog::set_level(spdlog::level::err);  // phase 2 refuses the client on purpose
  std::printf("| phase | workload | time | result |\n|---|---|---|---|\n");
  std::optional<bool> watch_list = ParseBool(flags.Get("watch-list"));
  if (!watch_list) {
    std::fprintf(stderr, "sync_bench: --watch-list must be true or false\n");
    return 2;
  }
  InitialSync(std::stoi(flags.Get("nodes")), std::stoi(flags.Get("pods")), *watch_list);
  EventRate(std::stoi(flags.Get("events")));
  return 0;
}
