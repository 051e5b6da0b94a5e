// app::Applications, the cache of open stores (issue 33): opening a store is not the read of the
// request that asked for it, so the read deadline of the thread that opens it does not bound it.
#include <gtest/gtest.h>

#include <chrono>

#include "app/application.hpp"
#include "storage/read_deadline.hpp"
#include "temp_dir.hpp"

namespace crmd::app {
namespace {

TEST(ApplicationsTest, AnOpenIsNotBoundedByTheReadDeadlineOfTheThreadThatOpensIt) {
  test::TempDir dir("applications-open");
  bool bounded_while_opening = true;
  Applications apps(dir.path().string(), StoreOptions{}, {},
                    [&](Application&) { bounded_while_opening = storage::ReadDeadline::Passed(); });
  const storage::ReadDeadline passed(std::chrono::steady_clock::now() - std::chrono::seconds(1));
  const auto app = apps.Open("a1");
  ASSERT_NE(app, nullptr);
  // A cold open that had waited past a network thread's read slice was abandoned there and done
  // again off that thread.
  EXPECT_FALSE(bounded_while_opening);
  EXPECT_TRUE(storage::ReadDeadline::Passed());  // the caller's own reads still are bounded
}

}  // namespace
}  // namespace crmd::app
