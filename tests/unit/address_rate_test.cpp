// util::AddressRate (issue 31 #18): the per-address budget of the anonymous doors.
#include <gtest/gtest.h>

#include <string>

#include "util/address_rate.hpp"

namespace crmd {
namespace {

using Clock = AddressRate::Clock;

TEST(AddressRateTest, ABurstOfTheRatePassesAndTheNextCallIsRefused) {
  AddressRate rate(60);
  const auto t = Clock::now();
  for (int i = 0; i < 60; ++i) EXPECT_TRUE(rate.Take("10.0.0.1", t)) << i;
  EXPECT_FALSE(rate.Take("10.0.0.1", t));
  EXPECT_TRUE(rate.Take("10.0.0.2", t));  // another address has its own budget
}

TEST(AddressRateTest, TheBudgetRefillsAtTheRate) {
  AddressRate rate(60);  // one a second
  const auto t = Clock::now();
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(rate.Take("a", t));
  EXPECT_FALSE(rate.Take("a", t + std::chrono::milliseconds(500)));
  EXPECT_TRUE(rate.Take("a", t + std::chrono::milliseconds(1600)));
  EXPECT_FALSE(rate.Take("a", t + std::chrono::milliseconds(1700)));
  // Never more than a minute's worth, however long it waited.
  int passed = 0;
  for (int i = 0; i < 100; ++i) passed += rate.Take("a", t + std::chrono::hours(1));
  EXPECT_EQ(passed, 60);
}

TEST(AddressRateTest, ZeroMeansNoLimit) {
  AddressRate rate(0);
  const auto t = Clock::now();
  for (int i = 0; i < 10'000; ++i) ASSERT_TRUE(rate.Take("a", t));
}

TEST(AddressRateTest, TheTableStaysBoundedAndForgetsIdleAddresses) {
  AddressRate rate(2);
  const auto t = Clock::now();
  for (std::size_t i = 0; i < AddressRate::kMaxAddresses; ++i) ASSERT_TRUE(rate.Take(std::to_string(i), t));
  // Full, and every address spent part of its budget: a new one is refused rather than grow it.
  EXPECT_FALSE(rate.Take("new", t));
  // A minute later every budget refilled: they are forgotten and the newcomer passes.
  EXPECT_TRUE(rate.Take("new", t + std::chrono::minutes(1)));
}

}  // namespace
}  // namespace crmd
