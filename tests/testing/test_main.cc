// The test runner's main: GoogleTest, after creating spdlog's logger registry on this one thread.
// spdlog creates it lazily inside its (uninstrumented) shared library; creating it here, before any
// test starts threads, gives ThreadSanitizer the ordering it cannot see there.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

int main(int argc, char** argv) {
  spdlog::default_logger_raw();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
