// http/upload_pace (issue 31 #10): an upload keeps a minimum pace over each window and ends within
// its total time; a trickle fails at the end of its first window, a steady upload goes on.
#include <gtest/gtest.h>

#include "http/upload_pace.hpp"

namespace crmd::http {
namespace {

using namespace std::chrono_literals;
using Clock = UploadPace::Clock;

TEST(UploadPaceTest, ATrickleFailsAtTheEndOfItsWindow) {
  const auto t0 = Clock::time_point{} + 1000s;
  UploadPace pace(1024, 10s, 3600s, t0);
  EXPECT_EQ(pace.Deadline(), t0 + 10s) << "a short window fails at its end";
  for (int i = 1; i <= 4; ++i) EXPECT_EQ(pace.Add(1, t0 + i * 2s), UploadPace::Verdict::kGoOn);
  EXPECT_EQ(pace.Add(1, t0 + 10s), UploadPace::Verdict::kTooSlow);
}

TEST(UploadPaceTest, ASteadyUploadGoesOnWindowAfterWindow) {
  const auto t0 = Clock::time_point{} + 1000s;
  UploadPace pace(1024, 10s, 3600s, t0);
  for (int s = 1; s <= 100; ++s) ASSERT_EQ(pace.Add(2048, t0 + s * 1s), UploadPace::Verdict::kGoOn) << s;
  // A window [t0 + 100 s, t0 + 110 s) not full yet fails at its end; once full, a pause may last
  // to the end of the next one.
  const auto window_end = t0 + 110s;
  EXPECT_EQ(pace.Deadline(), window_end);
  ASSERT_EQ(pace.Add(10 * 1024, t0 + 101s), UploadPace::Verdict::kGoOn);
  EXPECT_EQ(pace.Deadline(), window_end + 10s);
  EXPECT_EQ(pace.Add(20 * 1024, window_end + 9s), UploadPace::Verdict::kGoOn);
}

TEST(UploadPaceTest, AnUploadEndsWithinItsTotalTimeHoweverFast) {
  const auto t0 = Clock::time_point{} + 1000s;
  UploadPace pace(1024, 10s, 30s, t0);
  for (int s = 1; s < 30; ++s) ASSERT_EQ(pace.Add(1 << 20, t0 + s * 1s), UploadPace::Verdict::kGoOn);
  EXPECT_EQ(pace.Add(1 << 20, t0 + 30s), UploadPace::Verdict::kTooLong);
  EXPECT_LE(pace.Deadline(), t0 + 30s);
}

TEST(UploadPaceTest, WithoutAMinimumEachReadWaitsOneWindow) {
  const auto t0 = Clock::time_point{} + 1000s;
  UploadPace pace(0, 30s, 3600s, t0);
  EXPECT_EQ(pace.Add(1, t0 + 29s), UploadPace::Verdict::kGoOn);
  EXPECT_EQ(pace.Deadline(), t0 + 59s);
  EXPECT_EQ(pace.Add(1, t0 + 58s), UploadPace::Verdict::kGoOn);
}

}  // namespace
}  // namespace crmd::http
