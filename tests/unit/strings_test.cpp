#include <gtest/gtest.h>

#include "util/strings.hpp"

namespace crmd {
namespace {

TEST(StringsTest, SplitKeepsEmptyParts) {
  EXPECT_EQ(Split("a,,b", ','), (std::vector<std::string_view>{"a", "", "b"}));
  EXPECT_EQ(Split("", ','), (std::vector<std::string_view>{""}));
  EXPECT_EQ(Split("a.b.c", '.'), (std::vector<std::string_view>{"a", "b", "c"}));
  EXPECT_EQ(Split(",", ','), (std::vector<std::string_view>{"", ""}));
}

}  // namespace
}  // namespace crmd
