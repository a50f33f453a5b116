// The gpusched binary on bad files and flags: each case ends promptly with exit code 2 (1 for
// policy check) and one clear line, never a crash, a hang or a server started on nothing.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>

#include "testing/handed_pipe.h"
#include "testing/test_support.h"

extern char** environ;

namespace gpusched::cli_files_test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A gpusched process; stdout and stderr go to one file, read with Output(). `handed_fd`, if any,
// becomes its descriptor 3 (/dev/fd/3), as a shell's <(...) hands one.
class Gpusched {
 public:
  Gpusched(const std::vector<std::string>& args, const std::string& output, int handed_fd = -1)
      : output_(output) {
    std::vector<std::string> argv_strings{GPUSCHED_BINARY};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_strings) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    if (handed_fd >= 0) posix_spawn_file_actions_adddup2(&actions, handed_fd, 3);
    if (posix_spawn(&pid_, GPUSCHED_BINARY, &actions, nullptr, argv.data(), environ) != 0) {
      pid_ = -1;
    }
    posix_spawn_file_actions_destroy(&actions);
  }
  ~Gpusched() {
    if (pid_ > 0 && !status_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  // The exit code once the process has ended, within `limit`; -N when signal N killed it;
  // nullopt when it is still running.
  std::optional<int> Wait(std::chrono::milliseconds limit) {
    for (auto end = std::chrono::steady_clock::now() + limit; !status_;) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
      } else if (std::chrono::steady_clock::now() > end) {
        break;
      } else {
        std::this_thread::sleep_for(10ms);
      }
    }
    return status_;
  }
  // Waits (within `limit`) until `condition` holds; false when it never did.
  template <class F>
  static bool Eventually(std::chrono::milliseconds limit, F condition) {
    for (auto end = std::chrono::steady_clock::now() + limit; !condition();) {
      if (std::chrono::steady_clock::now() > end) return false;
      std::this_thread::sleep_for(10ms);
    }
    return true;
  }
  std::string Output() const { return testing::ReadFile(output_); }
  pid_t pid() const { return pid_; }

 private:
  std::string output_;
  pid_t pid_ = -1;
  std::optional<int> status_;
};

class CliFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpusched-cli-files-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    ::unsetenv("KUBERNETES_SERVICE_HOST");  // never the in-cluster path
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = Path(name);
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  struct Result {
    std::optional<int> exit_code;
    std::string output;
  };
  // Runs gpusched to its end (at most 60 s: sanitizer builds are slow).
  Result Run(const std::vector<std::string>& args) {
    Gpusched g(args, Path("output"));
    auto code = g.Wait(60s);
    return {code, g.Output()};
  }
  // Expects gpusched `args` to exit with `code` and print `message`.
  void ExpectFailure(const std::vector<std::string>& args, int code, const std::string& message) {
    Result r = Run(args);
    EXPECT_EQ(r.exit_code, code) << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
  }

  fs::path dir_;
};

constexpr char kRequestPodJson[] =
    R"({"metadata":{"name":"p","namespace":"ns"},)"
    R"("spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})";
constexpr char kRequestPodYaml[] =
    "metadata: {name: p, namespace: ns}\n"
    "spec:\n  containers:\n  - resources: {limits: {nvidia.com/gpu: 1}}\n";

TEST_F(CliFiles, an_empty_inventory_or_a_directory_is_refused) {
  std::string empty = Write("empty.yaml", "");
  ExpectFailure({"serve", "--cluster", empty}, 2, "no Node in the inventory");
  ExpectFailure({"serve", "--cluster", dir_.string()}, 2, dir_.string() + " is a directory");
  std::string pod = Write("pod.json", kRequestPodJson);
  ExpectFailure({"explain", "--pod", pod, "--cluster", empty}, 2, "--allow-empty-inventory");
}

TEST_F(CliFiles, allow_empty_inventory_starts_on_no_nodes) {
  std::string empty = Write("empty.yaml", "");
  std::string pod = Write("pod.json", kRequestPodJson);
  Result explained = Run({"explain", "--pod", pod, "--cluster", empty, "--allow-empty-inventory"});
  EXPECT_EQ(explained.exit_code, 0) << explained.output;
  Gpusched serve(
      {"serve", "--cluster", empty, "--allow-empty-inventory", "--listen", "127.0.0.1:0"},
      Path("serve-output"));
  ASSERT_TRUE(Gpusched::Eventually(60s, [&] {
    return serve.Output().find("0 nodes") != std::string::npos || serve.Wait(0ms).has_value();
  })) << serve.Output();
  EXPECT_NE(serve.Output().find("serving http://127.0.0.1:"), std::string::npos) << serve.Output();
  ::kill(serve.pid(), SIGTERM);
  EXPECT_EQ(serve.Wait(60s), 0) << serve.Output();
}

TEST_F(CliFiles, the_webhook_listener_needs_its_certificate_and_key) {
  ExpectFailure({"serve", "--webhook-listen", "127.0.0.1:0"}, 2,
                "--webhook-listen needs --webhook-tls-cert and --webhook-tls-key");
  ExpectFailure({"serve", "--webhook-tls-cert", Path("c.pem")}, 2,
                "--webhook-tls-cert and --webhook-tls-key need --webhook-listen");
  ExpectFailure({"serve", "--webhook-listen", "nowhere", "--webhook-tls-cert", Path("c.pem"),
                 "--webhook-tls-key", Path("k.pem")},
                2, "--webhook-listen must be HOST:PORT");
}

TEST_F(CliFiles, a_50000_digit_scalar_is_no_crash) {
  std::string digits = Write("digits.yaml", "x: " + std::string(50000, '1') + "\n");
  std::string pod = Write("pod.json", kRequestPodJson);
  ExpectFailure({"serve", "--cluster", digits}, 2, "no Node in the inventory");
  ExpectFailure({"explain", "--pod", pod, "--cluster", digits}, 2, "no Node in the inventory");
}

TEST_F(CliFiles, an_alias_bomb_fails_at_once) {
  std::string yaml = testing::BillionLaughsYaml();
  ExpectFailure({"serve", "--cluster", Write("bomb.yaml", yaml)}, 2,
                "alias expansion exceeds the limit");
}

TEST_F(CliFiles, policy_check_names_a_directory_and_escapes_binary_bytes) {
  ExpectFailure({"policy", "check", dir_.string()}, 1, dir_.string() + " is a directory");
  std::string binary = Write("binary.yaml", std::string("a: \"\\\0\x01\xff\"\n", 10));
  Result r = Run({"policy", "check", binary});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("unknown escape character: \\x00"), std::string::npos) << r.output;
  for (char c : r.output) EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << int(c);
}

// A trace the simulator cannot measure is refused before any run, with what to change: a
// cluster without a GPU (every figure a share of nothing), and pods asking for slivers of a large
// cluster, which tuning would clone into tens of millions (gigabytes) before the first pod.
TEST_F(CliFiles, simulate_refuses_a_trace_it_cannot_measure) {
  std::string pods = Write("pods.csv",
                           "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,100,100,1,1\n"
                           "p2,100,100,0,0\n");
  std::string cpu_only =
      Write("cpu.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,0,\n");
  ExpectFailure({"simulate", "--nodes", cpu_only, "--pods", pods, "--progress", "false"}, 2,
                cpu_only + ": no node offers a GPU, so there is nothing to pack");
  std::string nodes = "sn,cpu_milli,memory_mib,gpu,model\n";
  for (int i = 0; i < 100; ++i) nodes += "n" + std::to_string(i) + ",96000,262144,8,G2\n";
  std::string large = Write("large.csv", nodes);
  ExpectFailure({"simulate", "--nodes", large, "--pods", pods, "--progress", "false"}, 2,
                large +
                    ": tuned to 1.3 times the cluster's 800 GPUs, the 2 pods would become about "
                    "2080000, past the simulator's 1000000");
  // The same trace in the file's order is not cloned, so it runs.
  Result r = Run(
      {"simulate", "--nodes", large, "--pods", pods, "--order", "trace", "--progress", "false"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_F(CliFiles, serve_flags_are_validated) {
  ExpectFailure({"serve", "--max-body-bytes", "1e309"}, 2, "--max-body-bytes must be");
  ExpectFailure({"serve", "--max-body-bytes", "5Gi"}, 2, "--max-body-bytes must be");
  ExpectFailure({"serve", "--filter-verb", "same", "--prioritize-verb", "same"}, 2, "must differ");
  ExpectFailure({"serve", "--filter-verb", "a/b"}, 2, "single path segments");
  ExpectFailure({"serve", "--prioritize-verb", ""}, 2, "single path segments");
}

// Every bad flag is reported in one run, one "gpusched: " line each, before any file is read: the
// missing --cluster file is not reached.
TEST_F(CliFiles, every_bad_flag_is_reported_at_once) {
  Result r = Run({"capacity", "--cluster", Path("missing.yaml"), "--sync-timeout", "0",
                  "--max-pods", "1", "--pool-label", "team"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output,
            "gpusched: unknown flag --max-pods (see gpusched capacity --help)\n");  // parsing first
  r = Run({"capacity", "--cluster", Path("missing.yaml"), "--sync-timeout", "0", "--pool-label",
           "team"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output,
            "gpusched: --sync-timeout takes a whole number of seconds within 1..3600\n"
            "gpusched: --pool-label team: gpusched keeps only the nvidia.com/ labels of a node "
            "(not nvidia.com/gfd.timestamp); name one of those, such as nvidia.com/gpu.family\n");
  r = Run({"serve", "--threads", "0", "--log-format", "xml", "--listen", "nowhere"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output,
            "gpusched: --log-format must be text or json\n"
            "gpusched: --listen must be HOST:PORT, got \"nowhere\"\n"
            "gpusched: --threads and --keep-alive-timeout take positive whole numbers\n");
  // With the flags right, the file is read and its problem reported.
  ExpectFailure({"capacity", "--cluster", Path("missing.yaml")}, 2,
                "gpusched: " + Path("missing.yaml") + " does not exist");
}

TEST_F(CliFiles, explain_takes_a_pod_without_type_meta_as_json_or_yaml) {
  for (const auto& [name, text] :
       {std::pair{"pod.json", kRequestPodJson}, std::pair{"pod.yaml", kRequestPodYaml}}) {
    Result r = Run({"explain", "--pod", Write(name, text)});
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.output;
    EXPECT_NE(r.output.find("pod ns/p asks for nvidia.com/gpu: 1"), std::string::npos) << r.output;
  }
}

using testing::HandedPipe;

// How many of process `pid`'s descriptors are `link` (a pipe:[inode] or a path).
int OpenCount(pid_t pid, const fs::path& link) {
  std::error_code ec;
  int n = 0;
  for (const auto& fd : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    if (fs::read_symlink(fd.path(), ec) == link) ++n;
  }
  return n;
}

// A pipe whose writer never writes: the load blocks, as a very large inventory would.
TEST_F(CliFiles, a_signal_during_the_inventory_load_ends_serve) {
  HandedPipe pipe;
  Gpusched serve({"serve", "--cluster", "/dev/fd/3", "--listen", "127.0.0.1:0"}, Path("output"),
                 pipe.reader());
  // Loading has begun once the process has opened the pipe again by its name (its fd 3 is one).
  ASSERT_TRUE(Gpusched::Eventually(60s, [&] { return OpenCount(serve.pid(), pipe.link()) >= 2; }))
      << serve.Output();
  ::kill(serve.pid(), SIGTERM);
  EXPECT_EQ(serve.Wait(30s), 128 + SIGTERM) << serve.Output();
  EXPECT_NE(serve.Output().find("received signal 15 while starting"), std::string::npos)
      << serve.Output();
}

// --cluster <(kubectl get nodes,pods -A -o yaml), as docs/operations.md shows it.
TEST_F(CliFiles, explain_reads_a_handed_pipe) {
  HandedPipe pipe;
  pipe.Write(testing::Fixture("nodes/01-t4-plain-1gpu.json"));
  pipe.CloseWriter();
  Gpusched explain(
      {"explain", "--pod", Write("pod.json", kRequestPodJson), "--cluster", "/dev/fd/3"},
      Path("output"), pipe.reader());
  EXPECT_EQ(explain.Wait(60s), 0) << explain.Output();
  EXPECT_NE(explain.Output().find("ip-10-0-12-34.us-west-2.compute.internal"), std::string::npos)
      << explain.Output();
}

// A named FIFO is never opened waiting for a writer, nor read: refused at once, whatever reads it.
TEST_F(CliFiles, a_fifo_is_refused_at_once) {
  std::string fifo = Path("policy.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string refused = fifo + " is not a regular file (FIFO)";
  for (const auto& flag : {"--policy", "--cluster"}) {
    Gpusched serve({"serve", flag, fifo, "--listen", "127.0.0.1:0"}, Path("output"));
    std::optional<int> code = serve.Wait(10s);
    EXPECT_EQ(code, 2) << flag << ": " << serve.Output();
    EXPECT_NE(serve.Output().find(refused), std::string::npos) << serve.Output();
  }
  ExpectFailure({"policy", "check", fifo}, 1, refused);
}

// The port in "serving http://127.0.0.1:PORT/...", or 0 before that line.
int ServingPort(const std::string& output) {
  const std::string marker = "serving http://127.0.0.1:";
  size_t at = output.find(marker);
  return at == std::string::npos ? 0 : std::atoi(output.c_str() + at + marker.size());
}

std::string Metrics(int port) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(2, 0);
  c.set_read_timeout(5, 0);
  auto r = c.Get("/metrics");
  return r ? r->body : "no answer";
}

size_t Occurrences(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The policy file becomes a FIFO while serving: the reload fails (logged once, counted) and the
// process still ends promptly on SIGTERM (it used to wait for a FIFO writer forever).
TEST_F(CliFiles, sigterm_ends_serve_when_the_policy_becomes_a_fifo) {
  std::string policy =
      Write("policy.yaml", "apiVersion: gpusched.io/v1alpha1\nkind: SchedulingPolicy\n");
  Gpusched serve(
      {"serve", "--policy", policy, "--policy-reload-interval", "1", "--listen", "127.0.0.1:0"},
      Path("output"));
  ASSERT_TRUE(Gpusched::Eventually(60s, [&] { return ServingPort(serve.Output()) > 0; }))
      << serve.Output();
  int port = ServingPort(serve.Output());
  EXPECT_NE(Metrics(port).find("gpusched_policy_reloads_total{result=\"failed\"} 0"),
            std::string::npos);

  std::string fifo = Path("policy.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::rename(fifo, policy);
  const std::string refused = policy + " is not a regular file (FIFO)";
  EXPECT_TRUE(Gpusched::Eventually(10s, [&] {
    return serve.Output().find(refused) != std::string::npos;
  })) << serve.Output();
  std::this_thread::sleep_for(2500ms);  // two more checks of the same FIFO
  EXPECT_EQ(Occurrences(serve.Output(), refused), 1u) << serve.Output();
  EXPECT_NE(Metrics(port).find("gpusched_policy_reloads_total{result=\"failed\"} 1"),
            std::string::npos);

  auto start = std::chrono::steady_clock::now();
  ::kill(serve.pid(), SIGTERM);
  EXPECT_EQ(serve.Wait(10s), 0) << serve.Output();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

}  // namespace
}  // namespace gpusched::cli_files_test
