// query/portable_regex (issue 31 #15): the portable form of `$regex` patterns, and what is refused
// with 400 102 whatever the store.
#include <gtest/gtest.h>

#include <re2/re2.h>

#include <random>
#include <string>
#include <vector>

#include "query/portable_regex.hpp"

namespace crmd::query {
namespace {

std::string Portable(std::string_view pattern) {
  auto out = PortableRegex(pattern);
  EXPECT_TRUE(out.ok()) << pattern << ": " << (out.ok() ? "" : out.error().message);
  return out.ok() ? out.value() : std::string();
}

std::string Refusal(std::string_view pattern) {
  auto out = PortableRegex(pattern);
  EXPECT_FALSE(out.ok()) << pattern << " gave " << (out.ok() ? out.value() : "");
  if (out.ok()) return {};
  EXPECT_EQ(out.error().http_status, 400);
  EXPECT_EQ(out.error().code, 102);
  return out.error().message;
}

TEST(PortableRegexTest, PlainPatternsStayAsWrittenBehindTheDotAllFlag) {
  EXPECT_EQ(Portable(""), "(?s)");
  EXPECT_EQ(Portable("^Dana$"), "(?s)^Dana$");
  EXPECT_EQ(Portable("(a|bc)+x*?y{2,3}z{4,}"), "(?s)(a|bc)+x*?y{2,3}z{4,}");
  EXPECT_EQ(Portable("(?:ab)?"), "(?s)(?:ab)?");
  EXPECT_EQ(Portable("a\\.b\\*\\{"), "(?s)a\\.b\\*\\{");
  EXPECT_EQ(Portable("a{,3}"), "(?s)a\\{,3\\}");  // RE2: no repetition, the characters
  EXPECT_EQ(Portable("שלום"), "(?s)שלום");
}

TEST(PortableRegexTest, DotAnchorsAndEscapesTakeTheirRe2Meaning) {
  EXPECT_EQ(Portable("a.b"), "(?s)a[^\\n]b");
  EXPECT_EQ(Portable("(?s)a.b"), "(?s)a.b");
  EXPECT_EQ(Portable("(?s:.)."), "(?s)(?:.)[^\\n]");
  EXPECT_EQ(Portable("(?m)^a$"), "(?s)(?m:^)a(?m:$)");
  EXPECT_EQ(Portable("(?m)\\Aa\\z"), "(?s)^a$");
  EXPECT_EQ(Portable("\\bword\\B"), "(?s)\\bword\\B");
  EXPECT_EQ(Portable("(?P<first>a)(?<second>b)"), "(?s)(a)(b)");
  EXPECT_EQ(Portable("\\Q(a+b)\\E*"), "(?s)\\(a\\+b\\)*");
  EXPECT_EQ(Portable("\\x41\\x{5D0}\\101\\0\\t\\n"), "(?s)A\xd7\x90" "A[^\\x{01}-\xed\x9f\xbf\xee\x80\x80-\xf4\x8f\xbf\xbf]\\t\\n");
  EXPECT_EQ(Portable("a\\x1f\\x7F[\\x02-\\x{1E}]"), "(?s)a\\x{1F}\\x{7F}[\\x{02}-\\x{1E}]");  // never raw
  EXPECT_EQ(Portable("\\d\\s\\w"), "(?s)[0-9][\\t\\n\\f\\r ][0-9A-Z_a-z]");
  EXPECT_EQ(Portable("[[:word:]][[:^alpha:]x]"), "(?s)[0-9A-Z_a-z][^A-Za-wyz]");
  EXPECT_EQ(Portable("[]a-][\\]\\[^-]"), "(?s)[\\-\\]a][\\-\\[\\]\\^]");
  EXPECT_EQ(Portable("[^a]"), "(?s)[^a]");
  EXPECT_EQ(Portable("[\\x00-\\x{10FFFF}]"), "(?s).");
}

TEST(PortableRegexTest, CaseInsensitivityIsSpelledOut) {
  EXPECT_EQ(Portable("(?i)ab1"), "(?s)[Aa][Bb]1");
  EXPECT_EQ(Portable("a(?i:b)c"), "(?s)a(?:[Bb])c");
  EXPECT_EQ(Portable("(?i)a(?-i)b"), "(?s)[Aa]b");
  EXPECT_EQ(Portable("(?i)[a-c][^x]"), "(?s)[A-Ca-c][^Xx]");
  EXPECT_EQ(Portable("(?i)é"), "(?s)[Éé]");
  EXPECT_EQ(Portable("(?i)שלום"), "(?s)שלום");  // no case
  EXPECT_EQ(Portable("(?i)\\w"), "(?s)[0-9A-Z_a-z]");
  EXPECT_EQ(Portable("(?U)a+b*?"), "(?s)a+b*?");  // greediness never decides whether a row matches
}

TEST(PortableRegexTest, WhatTheStoresCannotShareIsRefusedAs102) {
  EXPECT_EQ(Refusal("\\pL"), "bad $regex: \\p and \\P (Unicode classes) are not supported");
  EXPECT_EQ(Refusal("\\p{Greek}"), "bad $regex: \\p and \\P (Unicode classes) are not supported");
  EXPECT_EQ(Refusal("[\\PN]"), "bad $regex: \\p and \\P (Unicode classes) are not supported");
  EXPECT_EQ(Refusal("a\\Cb"), "bad $regex: \\C (a single byte) is not supported");
  EXPECT_EQ(Refusal("a{1000}"), "bad $regex: a repetition count may be at most 255");
  EXPECT_EQ(Refusal("a{2,256}"), "bad $regex: a repetition count may be at most 255");
  EXPECT_EQ(Portable("a{255}b{0,255}"), "(?s)a{255}b{0,255}");
  EXPECT_EQ(Refusal("^*a"), "bad $regex: an anchor or a word boundary cannot be repeated");
  EXPECT_EQ(Refusal("\\b+"), "bad $regex: an anchor or a word boundary cannot be repeated");
  EXPECT_EQ(Refusal("[^\\x00-\\x{10FFFF}]"), "bad $regex: a class matches no character");
  EXPECT_EQ(Refusal("[[:foo:]]"), "bad $regex: the class [:foo:] is not supported");
}

// Every portable form is a pattern RE2 runs: what SQLite gets.
TEST(PortableRegexTest, ThePortableFormIsRe2) {
  for (const char* pattern : {"(?i)[a-zà-ÿ]+\\b", "(?m)^\\s*$", "[^\\n]{0,255}", "\\Q[]{}\\E", "[\\W\\d]", "(?i)[\\x00-\\x7f]",
                              "(?i:[[:upper:]])", "a|", "(|b)", "(?s).*"}) {
    const std::string portable = Portable(pattern);
    RE2 re(portable, RE2::Quiet);
    EXPECT_TRUE(re.ok()) << pattern << " -> " << portable << ": " << re.error();
  }
}

// Random patterns RE2 accepts (a fixed seed, a bounded count): each is refused with 102 or
// rewritten into a pattern RE2 runs, which matches what the pattern as written matches.
TEST(PortableRegexTest, RandomPatternsAreRefusedOrMeanWhatTheySay) {
  static const std::vector<std::string> kPieces{"a", "b", "A", "Z", "1", ".", "*", "+", "?", "|", "(", ")", "[", "]", "^", "$",
                                                "-", "{", "}", ",", "2", "\\", "d", "w", "s", "b", "B", "z", "n", "(?i)",
                                                "(?m)", "(?s)", "(?:", "(?-i)", " ", "\n", "_", "[:alpha:]", "\\Q", "\\E"};
  static const std::vector<std::string> kTexts{"", "a", "ab", "AB", "a\nb", "b a", "1a", "aa\n", "-", "a{1}", " \n ",
                                               "Zz_9", "\n", "a-b", "ba\nab", "[x]", "^$"};
  std::mt19937 random(31);
  int accepted = 0, rewritten = 0;
  for (int n = 0; n < 20000; ++n) {
    std::string pattern;
    const int length = 1 + static_cast<int>(random() % 8);
    for (int k = 0; k < length; ++k) pattern += kPieces[random() % kPieces.size()];
    RE2 written(pattern, RE2::Quiet);
    if (!written.ok()) continue;
    ++accepted;
    auto portable = PortableRegex(pattern);
    if (!portable.ok()) {
      EXPECT_EQ(portable.error().code, 102) << pattern;
      continue;
    }
    ++rewritten;
    RE2 runs(portable.value(), RE2::Quiet);
    ASSERT_TRUE(runs.ok()) << pattern << " -> " << portable.value() << ": " << runs.error();
    for (const auto& text : kTexts)
      EXPECT_EQ(RE2::PartialMatch(text, runs), RE2::PartialMatch(text, written))
          << "/" << pattern << "/ -> /" << portable.value() << "/ on \"" << text << "\"";
  }
  EXPECT_GT(accepted, 1000);
  EXPECT_GT(rewritten, accepted * 9 / 10);
}

}  // namespace
}  // namespace crmd::query
