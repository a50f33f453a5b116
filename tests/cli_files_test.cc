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

#include "testing/test_support.h"

extern char** environ;

namespace gpusched {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A gpusched process; stdout and stderr go to one file, read with Output().
class Gpusched {
 public:
  Gpusched(const std::vector<std::string>& args, const std::string& output) : output_(output) {
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

TEST_F(CliFiles, a_50000_digit_scalar_is_no_crash) {
  std::string digits = Write("digits.yaml", "x: " + std::string(50000, '1') + "\n");
  std::string pod = Write("pod.json", kRequestPodJson);
  ExpectFailure({"serve", "--cluster", digits}, 2, "no Node in the inventory");
  ExpectFailure({"explain", "--pod", pod, "--cluster", digits}, 2, "no Node in the inventory");
}

TEST_F(CliFiles, an_alias_bomb_fails_at_once) {
  std::string yaml = "a: &a [x,x,x,x,x,x,x,x,x]\n";
  for (char level = 'b'; level <= 'i'; ++level) {
    std::string previous = "*" + std::string(1, static_cast<char>(level - 1));
    yaml += std::string(1, level) + ": &" + level + " [" + previous;
    for (int i = 0; i < 8; ++i) yaml += "," + previous;
    yaml += "]\n";
  }
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

TEST_F(CliFiles, serve_flags_are_validated) {
  ExpectFailure({"serve", "--max-body-bytes", "1e309"}, 2, "--max-body-bytes must be");
  ExpectFailure({"serve", "--max-body-bytes", "5Gi"}, 2, "--max-body-bytes must be");
  ExpectFailure({"serve", "--filter-verb", "same", "--prioritize-verb", "same"}, 2, "must differ");
  ExpectFailure({"serve", "--filter-verb", "a/b"}, 2, "single path segments");
  ExpectFailure({"serve", "--prioritize-verb", ""}, 2, "single path segments");
}

TEST_F(CliFiles, explain_takes_a_pod_without_type_meta_as_json_or_yaml) {
  for (const auto& [name, text] :
       {std::pair{"pod.json", kRequestPodJson}, std::pair{"pod.yaml", kRequestPodYaml}}) {
    Result r = Run({"explain", "--pod", Write(name, text)});
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.output;
    EXPECT_NE(r.output.find("pod ns/p asks for nvidia.com/gpu: 1"), std::string::npos) << r.output;
  }
}

// A FIFO with a writer that never writes: the load blocks, as a very large inventory would.
TEST_F(CliFiles, a_signal_during_the_inventory_load_ends_serve) {
  std::string fifo = Path("cluster.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  int writer = ::open(fifo.c_str(), O_RDWR | O_CLOEXEC);  // O_RDWR: does not wait for a reader
  ASSERT_GE(writer, 0);
  Gpusched serve({"serve", "--cluster", fifo, "--listen", "127.0.0.1:0"}, Path("output"));
  // Loading has begun once the process holds the FIFO open.
  ASSERT_TRUE(Gpusched::Eventually(60s, [&] {
    std::error_code ec;
    for (const auto& fd :
         fs::directory_iterator("/proc/" + std::to_string(serve.pid()) + "/fd", ec)) {
      if (fs::read_symlink(fd.path(), ec) == fifo) return true;
    }
    return false;
  }));
  ::kill(serve.pid(), SIGTERM);
  EXPECT_EQ(serve.Wait(30s), 128 + SIGTERM) << serve.Output();
  EXPECT_NE(serve.Output().find("received signal 15 while starting"), std::string::npos)
      << serve.Output();
  ::close(writer);
}

}  // namespace
}  // namespace gpusched
