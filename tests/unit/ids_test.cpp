// util/ids: random identifiers have the asked length, only alphanumerics, and every character
// equally likely (rejection sampling, no modulo bias toward the alphabet's start); object ids
// begin with the clock, in order.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "util/ids.hpp"

namespace crmd::ids {
namespace {

TEST(IdsTest, RandomAlnumIsUniformOverTheSixtyTwoCharacters) {
  Init();
  EXPECT_EQ(RandomAlnum(0), "");
  EXPECT_EQ(RandomAlnum(1).size(), 1u);
  EXPECT_EQ(RandomAlnum(2000).size(), 2000u);  // longer than one block of random bytes (1 KiB)
  std::map<char, int> seen;
  constexpr int kIds = 31'000, kLength = 20;  // 620,000 characters: 10,000 expected each
  for (int i = 0; i < kIds; ++i) {
    const std::string id = RandomAlnum(kLength);
    ASSERT_EQ(id.size(), static_cast<std::size_t>(kLength));
    ASSERT_TRUE(IsAlnumId(id, kLength)) << id;
    for (char c : id) ++seen[c];
  }
  EXPECT_EQ(seen.size(), 62u);
  // The standard deviation of each count is ~100; a modulo bias would put the first eight
  // characters ~3% (300) above the rest. 5 standard deviations either way never fails by chance.
  for (const auto& [c, n] : seen) {
    EXPECT_GT(n, 9'500) << c;
    EXPECT_LT(n, 10'500) << c;
  }
}

TEST(IdsTest, ObjectIdsSortByTheirMillisecondWithinACycleAndEndRandom) {
  Init();
  constexpr std::int64_t kCycle = 62LL * 62 * 62 * 62;  // 4 base-62 clock digits, in milliseconds
  const std::int64_t t = 1'790'000'000'000;
  std::string previous;
  for (std::int64_t ms = t; ms < t + 5'000; ms += 7) {
    const std::string id = NewObjectId(ms);
    ASSERT_EQ(id.size(), kObjectIdLength);
    ASSERT_TRUE(IsAlnumId(id, kObjectIdLength)) << id;
    if (!previous.empty()) {
      EXPECT_LT(previous.substr(0, 4), id.substr(0, 4)) << ms;  // no wrap in between
    }
    previous = id;
  }
  EXPECT_EQ(NewObjectId(t).substr(0, 4), NewObjectId(t + kCycle).substr(0, 4));  // the clock part wraps
  EXPECT_EQ(NewObjectId(0).substr(0, 4), "0000");
  EXPECT_EQ(NewObjectId(kCycle - 1).substr(0, 4), "zzzz");
  // The random part: 62^6 values, so 100 ids of one millisecond do not repeat (a repeat by chance:
  // about once in 10^7 runs).
  std::set<std::string> same_ms;
  for (int i = 0; i < 100; ++i) same_ms.insert(NewObjectId(t));
  EXPECT_EQ(same_ms.size(), 100u);
  EXPECT_EQ(NewObjectId().size(), kObjectIdLength);
  const std::string secret = NewSecret();
  EXPECT_EQ(secret.size(), kSecretLength);
  EXPECT_TRUE(IsAlnumId(secret, kSecretLength));
  EXPECT_NE(NewSecret(), secret);
}

}  // namespace
}  // namespace crmd::ids
