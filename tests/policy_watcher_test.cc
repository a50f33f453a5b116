#include "gpusched/policy/policy_watcher.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "gpusched/policy/policy_file.h"
#include "gpusched/util/file_text.h"

namespace gpusched::policy_watcher_test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string Policy(int weight) {
  return "apiVersion: gpusched.io/v1alpha1\nkind: SchedulingPolicy\nplugins:\n  gpu-binpack: "
         "{weight: " +
         std::to_string(weight) + "}\n";
}

void Write(const fs::path& p, const std::string& text) {
  std::ofstream out(p.string() + ".tmp", std::ios::binary);
  out << text;
  out.close();
  fs::rename(p.string() + ".tmp", p);  // replace atomically, as editors and kubelet do
}

// Polls `done` every 10 ms for at most 5 s.
template <class F>
bool WaitFor(F done) {
  for (int i = 0; i < 500; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return done();
}

double BinpackWeight(const Published<gpusched::Policy>& p) {
  return p.Get()->spec().profiles[0].plugins.at("gpu-binpack").weight;
}

// Replaces the file at `p` with a symbolic link to `target`, atomically.
void Symlink(const fs::path& p, const fs::path& target) {
  fs::create_symlink(target, p.string() + ".tmp");
  fs::rename(p.string() + ".tmp", p);
}

class PolicyWatcherTest : public ::testing::Test {
 protected:
  // Every test's log lines go to log_ (set before any watcher starts, restored after they end).
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gpusched-policy-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    saved_logger_ = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", log_));
  }
  void TearDown() override {
    spdlog::set_default_logger(saved_logger_);
    fs::remove_all(dir_);
  }

  // How many log lines so far contain `text`.
  size_t Logged(const std::string& text) const {
    auto lines = log_->last_formatted();
    return std::count_if(lines.begin(), lines.end(), [&](const std::string& line) {
      return line.find(text) != std::string::npos;
    });
  }
  std::string Log() const {
    std::string all;
    for (const auto& line : log_->last_formatted()) all += line;
    return all;
  }

  // A watcher on dir_/policy.yaml, which holds Policy(2) and is the published policy.
  struct Watched {
    fs::path file;
    Published<gpusched::Policy> published;
    std::unique_ptr<PolicyWatcher> watcher;
  };
  std::unique_ptr<Watched> Watch() {
    auto w = std::make_unique<Watched>();
    w->file = dir_ / "policy.yaml";
    Write(w->file, Policy(2));
    auto loaded = LoadPolicy(w->file.string());
    EXPECT_TRUE(loaded.ok()) << loaded.problems.lines()[0];
    w->published.Set(loaded.value);
    w->watcher = std::make_unique<PolicyWatcher>(w->file.string(), w->published, kInterval);
    return w;
  }

  // After a fault was put at the path: it is counted once and logged once with `reason`, however
  // many checks see it, and the policy in force stays.
  void ExpectOneFailure(const Watched& w, uint64_t failures_before, const std::string& reason) {
    ASSERT_TRUE(WaitFor([&] { return w.watcher->failures() > failures_before; })) << Log();
    std::this_thread::sleep_for(10 * kInterval);  // ten more checks of the same fault
    EXPECT_EQ(w.watcher->failures(), failures_before + 1) << Log();
    EXPECT_EQ(Logged(reason), 1u) << Log();
    EXPECT_EQ(Logged("keeping the last good policy"), failures_before + 1) << Log();
    EXPECT_EQ(BinpackWeight(w.published), 2);
  }
  // The good file is back (with weight 7): it loads and the recovery is logged.
  void ExpectRecovery(Watched& w) {
    Write(w.file, Policy(7));
    ASSERT_TRUE(WaitFor([&] { return w.watcher->reloads() == 1; })) << Log();
    EXPECT_EQ(BinpackWeight(w.published), 7);
    EXPECT_EQ(Logged("reloaded: digest"), 1u) << Log();
  }

  static constexpr auto kInterval = 20ms;
  fs::path dir_;
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> log_ =
      std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1000);
  std::shared_ptr<spdlog::logger> saved_logger_;
};

TEST_F(PolicyWatcherTest, good_bad_good_keeps_the_last_good_policy_in_between) {
  fs::path file = dir_ / "policy.yaml";
  Write(file, Policy(2));
  auto loaded = LoadPolicy(file.string());
  ASSERT_TRUE(loaded.ok()) << loaded.problems.lines()[0];
  std::shared_ptr<const gpusched::Policy> initial = loaded.value;
  Published<gpusched::Policy> published(initial);
  PolicyWatcher watcher(file.string(), published, 20ms);
  EXPECT_EQ(BinpackWeight(published), 2);

  Write(file, Policy(2) + "bogus: key\n");
  ASSERT_TRUE(WaitFor([&] { return watcher.failures() == 1; }));
  EXPECT_EQ(BinpackWeight(published), 2);
  EXPECT_EQ(published.Get()->digest(), initial->digest());

  Write(file, Policy(7));
  ASSERT_TRUE(WaitFor([&] { return watcher.reloads() == 1; }));
  EXPECT_EQ(BinpackWeight(published), 7);
  EXPECT_EQ(watcher.failures(), 1u);  // the same bad text was reported once
}

// A weight on a plugin that only filters is refused on reload like any other error: the policy in
// force stays, and the log names file, line and key.
TEST_F(PolicyWatcherTest, a_weight_on_a_filter_keeps_the_last_good_policy) {
  auto w = Watch();
  Write(w->file, Policy(3) + "  gpu-fit: {weight: 1}\n");
  ExpectOneFailure(*w, 0, "policy.yaml:5:21: plugins.gpu-fit.weight: must be 0");
  ExpectRecovery(*w);
}

TEST_F(PolicyWatcherTest, follows_a_configmap_symlink_swap) {
  // kubelet's layout: policy.yaml -> ..data/policy.yaml, ..data -> ..<timestamp>/
  fs::create_directories(dir_ / "..v1");
  fs::create_directories(dir_ / "..v2");
  Write(dir_ / "..v1" / "policy.yaml", Policy(3));
  Write(dir_ / "..v2" / "policy.yaml", Policy(9));
  fs::create_directory_symlink("..v1", dir_ / "..data");
  fs::create_symlink("..data/policy.yaml", dir_ / "policy.yaml");
  std::string path = (dir_ / "policy.yaml").string();
  Published<gpusched::Policy> published(LoadPolicy(path).value);
  ASSERT_TRUE(published.Get());
  PolicyWatcher watcher(path, published, 20ms);
  EXPECT_EQ(BinpackWeight(published), 3);

  fs::create_directory_symlink("..v2", dir_ / "..data_tmp");
  fs::rename(dir_ / "..data_tmp", dir_ / "..data");
  ASSERT_TRUE(WaitFor([&] { return watcher.reloads() == 1; }));
  EXPECT_EQ(BinpackWeight(published), 9);
}

// Opens `fifo` for writing: a reader stuck in open(2) of it, as the code before these tests was,
// is released.
void ReleaseFifoReaders(const fs::path& fifo) {
  int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) ::close(fd);
}

// On scope exit, even after a failed ASSERT: `file` is a regular file again and readers stuck on
// `fifo` are released, so a failing test ends instead of hanging in the watcher's destructor.
class FifoRescue {
 public:
  FifoRescue(fs::path file, fs::path fifo) : file_(std::move(file)), fifo_(std::move(fifo)) {}
  ~FifoRescue() {
    Write(file_, Policy(2));
    ReleaseFifoReaders(fifo_);
  }
  FifoRescue(const FifoRescue&) = delete;
  FifoRescue& operator=(const FifoRescue&) = delete;

 private:
  fs::path file_;
  fs::path fifo_;
};

TEST_F(PolicyWatcherTest, a_fifo_at_the_path_is_refused_without_blocking_the_watcher) {
  auto w = Watch();
  fs::path fifo = dir_ / "fifo";  // a second name, to reach the FIFO once replaced
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  FifoRescue rescue(w->file, fifo);
  ASSERT_EQ(::link(fifo.c_str(), (dir_ / "policy.yaml.tmp").c_str()), 0);
  fs::rename(dir_ / "policy.yaml.tmp", w->file);
  ExpectOneFailure(*w, 0, w->file.string() + " is not a regular file (FIFO)");
  ReleaseFifoReaders(fifo);
  ExpectRecovery(*w);
  // The FIFO again, then destruction while it is in place: prompt.
  ASSERT_EQ(::link(fifo.c_str(), (dir_ / "policy.yaml.tmp").c_str()), 0);
  fs::rename(dir_ / "policy.yaml.tmp", w->file);
  ASSERT_TRUE(WaitFor([&] { return w->watcher->failures() == 2; })) << Log();
  ReleaseFifoReaders(fifo);
  auto start = std::chrono::steady_clock::now();
  w->watcher.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 500ms);
}

TEST_F(PolicyWatcherTest, a_symlink_loop_is_logged_and_counted_once) {
  auto w = Watch();
  fs::create_symlink("loop-b", dir_ / "loop-a");
  fs::create_symlink("loop-a", dir_ / "loop-b");
  Symlink(w->file, "loop-a");
  ExpectOneFailure(*w, 0, "policy.yaml: cannot open: too many levels of symbolic links");
  ExpectRecovery(*w);
}

TEST_F(PolicyWatcherTest, a_deleted_file_is_logged_and_counted_once) {
  auto w = Watch();
  fs::remove(w->file);
  ExpectOneFailure(*w, 0, w->file.string() + " does not exist");
  ExpectRecovery(*w);
}

TEST_F(PolicyWatcherTest, dev_zero_is_refused_before_reading) {
  auto w = Watch();
  Symlink(w->file, "/dev/zero");
  ExpectOneFailure(*w, 0, "policy.yaml is not a regular file (character device)");
  ExpectRecovery(*w);
}

TEST_F(PolicyWatcherTest, a_2_gib_file_is_refused_by_its_size) {
  auto w = Watch();
  fs::path big = dir_ / "big";
  int fd = ::open(big.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, off_t{1} << 31), 0);  // sparse: no disk, no time
  ::close(fd);
  fs::rename(big, w->file);
  ExpectOneFailure(*w, 0, "is 2147483648 bytes; the limit for a policy file is 1048576 bytes");
  ExpectRecovery(*w);
}

TEST_F(PolicyWatcherTest, each_different_failure_is_logged_once) {
  auto w = Watch();
  fs::remove(w->file);
  ExpectOneFailure(*w, 0, "does not exist");
  Symlink(w->file, "/dev/zero");
  ExpectOneFailure(*w, 1, "not a regular file (character device)");
  // The same reason, another file: a change.
  Symlink(w->file, "/dev/null");
  ASSERT_TRUE(WaitFor([&] { return w->watcher->failures() == 3; })) << Log();
  EXPECT_EQ(Logged("not a regular file (character device)"), 2u) << Log();
  Write(w->file, Policy(2) + "bogus: key\n");
  ExpectOneFailure(*w, 3, "bogus");
  ExpectRecovery(*w);
  EXPECT_EQ(w->watcher->failures(), 4u);
}

// A read that does not return (a hung network mount) must not hold up shutdown.
TEST_F(PolicyWatcherTest, the_destructor_does_not_wait_for_a_hung_read) {
  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    bool entered = false;
    bool open = false;
  };
  auto gate = std::make_shared<Gate>();
  // The reader holds the gate, not the test's locals: it may run after the test has ended.
  PolicyWatcher::Reader hung = [gate](const std::string&) {
    std::unique_lock lock(gate->mu);
    gate->entered = true;
    gate->cv.notify_all();
    gate->cv.wait_for(lock, 30s, [&] { return gate->open; });
    return Policy(9);
  };
  Published<gpusched::Policy> published(
      std::make_shared<const gpusched::Policy>(ParsePolicy(Policy(2), "p.yaml").value, "initial"));
  auto watcher =
      std::make_unique<PolicyWatcher>((dir_ / "policy.yaml").string(), published, kInterval, hung);
  {
    std::unique_lock lock(gate->mu);
    ASSERT_TRUE(gate->cv.wait_for(lock, 5s, [&] { return gate->entered; }));
  }
  auto start = std::chrono::steady_clock::now();
  watcher.reset();
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, PolicyWatcher::kStopWait - 50ms);
  EXPECT_LT(took, PolicyWatcher::kStopWait + 1s);
  EXPECT_EQ(Logged("a check is still reading the file"), 1u) << Log();
  {
    std::lock_guard lock(gate->mu);
    gate->open = true;
  }
  gate->cv.notify_all();
  // The read returns a new policy; the thread left behind must not publish or log it.
  std::this_thread::sleep_for(10 * kInterval);
  EXPECT_EQ(BinpackWeight(published), 2);
  EXPECT_EQ(Logged("reloaded"), 0u) << Log();
}

TEST(LoadPolicy, reports_unreadable_and_invalid_files) {
  auto missing = LoadPolicy("/nonexistent/policy.yaml");
  EXPECT_FALSE(missing.ok());
  EXPECT_EQ(missing.value, nullptr);
  EXPECT_EQ(missing.problems.lines(),
            std::vector<std::string>{"/nonexistent/policy.yaml does not exist"});
}

}  // namespace
}  // namespace gpusched::policy_watcher_test
