#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "util/json.hpp"

namespace crmd {
namespace {

TEST(JsonTest, NumbersAreWrittenAsJavaScriptWrites) {
  EXPECT_EQ(FormatNumber(1.5), "1.5");
  EXPECT_EQ(FormatNumber(3.0), "3");
  EXPECT_EQ(FormatNumber(-0.1), "-0.1");
  EXPECT_EQ(FormatNumber(1e21), "1e+21");
  EXPECT_EQ(FormatNumber(1e-7), "1e-7");
  EXPECT_EQ(ToJson(boost::json::value(0.1 + 0.2)), "0.30000000000000004");
  EXPECT_EQ(FormatNumber(0.0001), "0.0001");
  EXPECT_EQ(FormatNumber(0.000001), "0.000001");
  EXPECT_EQ(FormatNumber(1.5e-7), "1.5e-7");
  EXPECT_EQ(FormatNumber(123456789012345680000.0), "123456789012345680000");
  EXPECT_EQ(FormatNumber(1.2345e25), "1.2345e+25");
  EXPECT_EQ(FormatNumber(-42.25), "-42.25");
}

TEST(JsonTest, StringsAreEscaped) {
  EXPECT_EQ(ToJson(boost::json::value("a\"b\\c\n\x01")), R"("a\"b\\c\n\u0001")");
  EXPECT_EQ(ToJson(boost::json::value("שלום")), "\"שלום\"");
}

// The word-at-a-time scan escapes exactly what a byte-by-byte reference does, wherever in the
// eight-byte words the special bytes fall, for every byte value.
TEST(JsonTest, AppendJsonStringEscapesEveryByteWhereverItFalls) {
  auto reference = [](std::string_view s) {
    std::string out = "\"";
    for (unsigned char c : s) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
          if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
    }
    return out + "\"";
  };
  for (int byte = 0; byte < 256; ++byte) {
    for (std::size_t length = 1; length <= 20; ++length) {
      for (std::size_t at = 0; at < length; ++at) {
        std::string s(length, 'x');
        s[at] = static_cast<char>(byte);
        std::string out;
        AppendJsonString(s, out);
        ASSERT_EQ(out, reference(s)) << "byte " << byte << " at " << at << " of " << length;
      }
    }
  }
  std::string mixed = "plain text, then \"quoted\" \\ and\ttabs \x7f\x80 שלום \x1f end";
  std::string out;
  AppendJsonString(mixed, out);
  EXPECT_EQ(out, reference(mixed));
}

TEST(JsonTest, DeepNestingIsRefusedNotRecursedInto) {
  std::string deep(10000, '[');
  deep += std::string(10000, ']');
  auto r = ParseJson(deep);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, 107);
  std::string ok(kMaxJsonDepth - 1, '[');
  ok += std::string(kMaxJsonDepth - 1, ']');
  EXPECT_TRUE(ParseJson(ok).ok());
}

TEST(JsonTest, InvalidUtf8AndTrailingGarbageAreRefused) {
  EXPECT_FALSE(ParseJson("{\"a\":\"\xff\xfe\"}").ok());
  EXPECT_FALSE(ParseJson("{\"a\":1} x").ok());
  EXPECT_FALSE(ParseJson("{\"a\":1,}").ok());
  EXPECT_FALSE(ParseJson("").ok());
}

}  // namespace
}  // namespace crmd
