#include "gpusched/util/periodic.h"

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

namespace gpusched::periodic_test {
namespace {

using namespace std::chrono_literals;

// Waits up to 5 s for `done`.
template <class F>
bool Eventually(F&& done) {
  for (int i = 0; i < 500 && !done(); ++i) std::this_thread::sleep_for(10ms);
  return done();
}

TEST(PeriodicThread, runs_the_task_every_period) {
  std::atomic<int> runs{0};
  PeriodicThread thread(5ms, [&] { ++runs; });
  EXPECT_TRUE(Eventually([&] { return runs.load() >= 3; }));
}

TEST(PeriodicThread, first_run_waits_a_period_unless_woken) {
  std::atomic<int> runs{0};
  PeriodicThread thread(std::chrono::hours(1), [&] { ++runs; });
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(runs.load(), 0);
  thread.Wake();
  EXPECT_TRUE(Eventually([&] { return runs.load() == 1; }));
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(runs.load(), 1) << "one wake is one run";
}

TEST(PeriodicThread, stop_lets_the_run_finish_and_starts_no_other) {
  std::atomic<int> runs{0};
  std::atomic<bool> running{false};
  PeriodicThread thread(1ms, [&] {
    running = true;
    std::this_thread::sleep_for(20ms);
    ++runs;
  });
  ASSERT_TRUE(Eventually([&] { return running.load(); }));
  thread.Stop();
  int after_stop = runs.load();
  EXPECT_GE(after_stop, 1) << "the run under way finished before Stop returned";
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(runs.load(), after_stop);
  thread.Stop();  // idempotent
}

// A run that never returns (a read on a hung mount) does not hold up the stop; what the task
// holds stays alive until it returns.
TEST(PeriodicThread, stop_within_leaves_a_hung_run_behind) {
  auto release = std::make_shared<std::promise<void>>();
  auto held = std::make_shared<int>(7);
  std::shared_future<void> released = release->get_future().share();
  std::atomic<bool> entered{false};
  std::weak_ptr<int> watch = held;
  {
    PeriodicThread thread(1ms, [held = std::move(held), released, &entered] {
      entered = true;
      released.wait();
    });
    ASSERT_TRUE(Eventually([&] { return entered.load(); }));
    auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(thread.StopWithin(50ms));
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  }
  EXPECT_FALSE(watch.expired()) << "the detached thread still holds its task";
  release->set_value();
  EXPECT_TRUE(Eventually([&] { return watch.expired(); }));
}

TEST(PeriodicThread, stop_within_joins_an_idle_thread) {
  PeriodicThread thread(std::chrono::hours(1), [] {});
  EXPECT_TRUE(thread.StopWithin(1s));
}

}  // namespace
}  // namespace gpusched::periodic_test
