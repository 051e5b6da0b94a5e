// util/ids: random identifiers have the asked length, only alphanumerics, and every character
// equally likely (rejection sampling, no modulo bias toward the alphabet's start).
#include <gtest/gtest.h>

#include <map>

#include "util/ids.hpp"

namespace crmd::ids {
namespace {

TEST(IdsTest, RandomAlnumIsUniformOverTheSixtyTwoCharacters) {
  Init();
  EXPECT_EQ(RandomAlnum(0), "");
  EXPECT_EQ(RandomAlnum(1).size(), 1u);
  EXPECT_EQ(RandomAlnum(200).size(), 200u);  // longer than one block of random bytes
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

}  // namespace
}  // namespace crmd::ids
