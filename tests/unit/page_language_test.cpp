// api/page_language (issue 34): the pages' language from `lang`, else Accept-Language by q-value.
#include <gtest/gtest.h>

#include "api/page_language.hpp"

namespace crmd::api {
namespace {

Language Of(std::string_view accept, std::string_view target = "/p") {
  Request request;
  if (!accept.empty()) request.headers.emplace_back("accept-language", std::string(accept));
  return PageLanguage(request, *ParseTarget(target));
}

TEST(PageLanguageTest, AcceptLanguageChoosesByQualityAndSkipsWhatCrmdDoesNotSpeak) {
  EXPECT_EQ(Of(""), Language::kEnglish);
  EXPECT_EQ(Of("he-IL,he;q=0.9,en;q=0.5"), Language::kHebrew);
  EXPECT_EQ(Of("fr-FR, he;q=0.4, en;q=0.8"), Language::kEnglish);
  EXPECT_EQ(Of("fr, de;q=0.9, *;q=0.5"), Language::kEnglish);
  EXPECT_EQ(Of("iw"), Language::kHebrew);
  EXPECT_EQ(Of("en;q=0, he;q=0.1"), Language::kHebrew);
  EXPECT_EQ(Of(";;,,;q=,he"), Language::kHebrew);  // malformed parts are skipped, never a fault
}

TEST(PageLanguageTest, ThePagesLangParameterWins) {
  EXPECT_EQ(Of("en", "/p?lang=he"), Language::kHebrew);
  EXPECT_EQ(Of("he", "/p?lang=en"), Language::kEnglish);
  EXPECT_EQ(Of("he", "/p?lang=xx"), Language::kHebrew);
}

TEST(PageLanguageTest, EveryHebrewPageIsRightToLeftAndUntranslatedTextStaysEnglish) {
  EXPECT_TRUE(RightToLeft(Language::kHebrew));
  EXPECT_FALSE(RightToLeft(Language::kEnglish));
  EXPECT_EQ(Translate(Language::kHebrew, "Password changed"), "הסיסמה שונתה");
  EXPECT_EQ(Translate(Language::kEnglish, "Password changed"), "Password changed");
  EXPECT_EQ(Translate(Language::kHebrew, "Invalid username/password."), "Invalid username/password.");
}

}  // namespace
}  // namespace crmd::api
