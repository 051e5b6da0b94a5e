#include <gtest/gtest.h>

#include "util/time.hpp"

namespace crmd::timeutil {
namespace {

TEST(TimeTest, FormatsUtcWithMilliseconds) {
  EXPECT_EQ(FormatIso(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatIso(1795255200123), "2026-11-21T10:00:00.123Z");
  EXPECT_EQ(FormatIso(253402300799999), "9999-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatIso(-62167219200000), "0000-01-01T00:00:00.000Z");
  // Every millisecond field at every width, against the round trip through the parser.
  for (std::int64_t t = 951782400000; t < 951782400000 + 86400000LL * 3; t += 3600000LL * 7 + 60000LL * 13 + 1009)
    EXPECT_EQ(ParseIso(FormatIso(t)), t) << FormatIso(t);
}

TEST(TimeTest, ParsesTheFormsClientsSend) {
  EXPECT_EQ(NormalizeIso("2026-11-21T10:00:00.123Z"), "2026-11-21T10:00:00.123Z");
  EXPECT_EQ(NormalizeIso("2026-11-21T10:00:00Z"), "2026-11-21T10:00:00.000Z");
  EXPECT_EQ(NormalizeIso("2026-11-21"), "2026-11-21T00:00:00.000Z");
  EXPECT_EQ(NormalizeIso("2026-11-21T12:00:00.5+02:00"), "2026-11-21T10:00:00.500Z");
  EXPECT_EQ(NormalizeIso("2026-11-21T10:00:00.123456Z"), "2026-11-21T10:00:00.123Z");
}

TEST(TimeTest, RefusesMalformedDates) {
  for (const char* bad : {"", "2026", "2026-13-01", "2026-02-30", "2026-11-21T25:00:00Z",
                          "2026-11-21T10:00:00.Z", "2026-11-21T10:00:00Zjunk", "21/11/2026"})
    EXPECT_FALSE(ParseIso(bad).has_value()) << bad;
}

TEST(TimeTest, OffsetsThatLeaveFourDigitYearsAreRefused) {
  EXPECT_FALSE(ParseIso("9999-12-31T23:30:00-01:00").has_value());
  EXPECT_FALSE(ParseIso("0000-01-01T00:00:00+00:01").has_value());
  EXPECT_EQ(NormalizeIso("9999-12-31T23:59:59.999Z"), "9999-12-31T23:59:59.999Z");
}

TEST(TimeTest, BeforeTheEpochRoundTrips) {
  EXPECT_EQ(FormatIso(*ParseIso("1969-12-31T23:59:59.999Z")), "1969-12-31T23:59:59.999Z");
}

}  // namespace
}  // namespace crmd::timeutil
