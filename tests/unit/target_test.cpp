// api/target: a plain path (letters, digits, `-`, `_`, `/`) is split without the URL parser, into the
// same segments the parser finds; anything else still goes through the parser.
#include "api/target.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace crmd::api {
namespace {

using Segments = std::vector<std::string>;

Segments SegmentsOf(std::string_view raw) {
  auto t = ParseTarget(raw);
  EXPECT_TRUE(t.has_value()) << raw;
  return t ? t->segments : Segments{};
}

// The same path with its first letter percent-encoded: it takes the URL parser's road.
std::string ThroughParser(std::string plain) {
  for (std::size_t i = 0; i < plain.size(); ++i) {
    if (plain[i] == '/') continue;
    char escaped[4];
    std::snprintf(escaped, sizeof escaped, "%%%02X", static_cast<unsigned char>(plain[i]));
    return plain.replace(i, 1, escaped);
  }
  return plain + "?";  // only slashes: an empty query
}

TEST(TargetTest, PlainPathsSplitAsTheUrlParserSplitsThem) {
  for (const std::string raw : {"/parse/classes/Accounts", "/parse/classes/Accounts/", "/parse/classes/Accounts/Ab3_x-9",
                                "/", "//", "//a", "/a//b", "/a/b//", "/health", "/parse/batch"}) {
    EXPECT_EQ(SegmentsOf(raw), SegmentsOf(ThroughParser(raw))) << raw;
    EXPECT_EQ(ParseTarget(raw)->path, raw);
    EXPECT_TRUE(ParseTarget(raw)->params.empty()) << raw;
  }
  EXPECT_EQ(SegmentsOf("/parse/classes/Accounts/"), (Segments{"parse", "classes", "Accounts"}));
  EXPECT_EQ(SegmentsOf("/"), Segments{});
  EXPECT_EQ(SegmentsOf("/a//b"), (Segments{"a", "", "b"}));
}

TEST(TargetTest, PathsThatAreNotPlainAreDecodedByTheParser) {
  auto t = ParseTarget("/parse/classes/A%20B/..?where=%7B%7D&limit=1+2");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->segments, (Segments{"parse", "classes", "A B", ".."}));
  ASSERT_EQ(t->params.size(), 2u);
  EXPECT_EQ(t->params[0], (std::pair<std::string, std::string>{"where", "{}"}));
  EXPECT_EQ(t->params[1], (std::pair<std::string, std::string>{"limit", "1 2"}));
  EXPECT_FALSE(ParseTarget("parse/classes").has_value());  // not origin-form
}

}  // namespace
}  // namespace crmd::api
