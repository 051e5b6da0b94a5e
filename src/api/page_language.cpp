#include "api/page_language.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "util/strings.hpp"

namespace crmd::api {

namespace {

std::optional<Language> FromTag(std::string_view tag) {
  std::string lower(tag.substr(0, tag.find_first_of("-_")));
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "en") return Language::kEnglish;
  if (lower == "he" || lower == "iw") return Language::kHebrew;  // `iw`: Hebrew's older code, still sent
  return std::nullopt;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Every sentence the pages show, English then Hebrew.
constexpr std::pair<std::string_view, std::string_view> kHebrew[] = {
    {"Choose a new password", "בחירת סיסמה חדשה"},
    {"New password", "סיסמה חדשה"},
    {"Confirm the new password", "אימות הסיסמה החדשה"},
    {"At least 8 characters, with a lower-case letter, an upper-case letter and a digit.",
     "לפחות 8 תווים, ובהם אות קטנה באנגלית, אות גדולה באנגלית וספרה."},
    {"Change password", "שינוי הסיסמה"},
    {"Password changed", "הסיסמה שונתה"},
    {"Your password was changed. You can sign in with it now.", "הסיסמה שלך שונתה. אפשר להיכנס איתה עכשיו."},
    {"Sign in", "כניסה"},
    {"Sign in to", "כניסה אל"},
    {"Password not changed", "הסיסמה לא שונתה"},
    {"This link is invalid, expired, or was already used.", "הקישור אינו תקף, פג תוקפו או שכבר נעשה בו שימוש."},
    {"The two passwords differ.", "שתי הסיסמאות אינן זהות."},
    {"Password does not meet the Password Policy requirements.", "הסיסמה אינה עומדת בדרישות מדיניות הסיסמאות."},
    {"Too many attempts now; try again later.", "יותר מדי ניסיונות כרגע; נסו שוב מאוחר יותר."},
    {"Not found", "לא נמצא"},
    {"This link is not valid.", "הקישור אינו תקף."},
    {"Link not valid", "הקישור אינו תקף"},
    {"The form could not be read.", "לא ניתן היה לקרוא את הטופס."},
    {"Username", "שם משתמש"},
    {"Password", "סיסמה"},
    {"Forgot your password?", "שכחת את הסיסמה?"},
    {"Reset your password", "איפוס הסיסמה"},
    {"Email", "דוא״ל"},
    {"Send me a link", "שלחו לי קישור"},
    {"Link sent", "הקישור נשלח"},
    {"If this address belongs to a user of this application, a link to choose a new password is on its way. It "
     "works for one hour.",
     "אם הכתובת שייכת למשתמש ביישום הזה, נשלח אליה קישור לבחירת סיסמה חדשה. הקישור תקף לשעה אחת."},
    {"This form expired or was not sent from its page; sign in again.", "תוקף הטופס פג או שהוא לא נשלח מהדף שלו; היכנסו שוב."},
    {"Too many attempts", "יותר מדי ניסיונות"},
    {"Too many sign-in attempts from this address; try again in a minute.", "יותר מדי ניסיונות כניסה מהכתובת הזאת; נסו שוב בעוד דקה."},
    {"Back to sign in", "חזרה לכניסה"},
    {"Sign-in failed; try again.", "הכניסה נכשלה; נסו שוב."},
    {"Signed in", "נכנסת"},
    {"Signed in.", "נכנסת."},
    {"Sign in to open this file.", "יש להיכנס כדי לפתוח את הקובץ."},
};

}  // namespace

Language PageLanguage(const Request& request, const Target& target) {
  if (auto chosen = FromTag(target.Param("lang"))) return *chosen;
  auto header = request.Header("accept-language");
  if (!header) return Language::kEnglish;
  std::optional<Language> best;
  double best_q = 0;
  for (std::string_view item : Split(*header, ',')) {
    item = Trim(item);
    double q = 1;
    if (auto semi = item.find(';'); semi != std::string_view::npos) {
      std::string_view param = Trim(item.substr(semi + 1));
      if (param.starts_with("q=")) q = std::strtod(std::string(param.substr(2)).c_str(), nullptr);
      item = Trim(item.substr(0, semi));
    }
    auto language = FromTag(item);
    if (language && q > best_q) best = language, best_q = q;
  }
  return best.value_or(Language::kEnglish);
}

std::string_view LanguageTag(Language language) { return language == Language::kHebrew ? "he" : "en"; }

bool RightToLeft(Language language) { return language == Language::kHebrew; }

std::string_view Translate(Language language, std::string_view english) {
  if (language == Language::kEnglish) return english;
  for (const auto& [en, he] : kHebrew)
    if (en == english) return he;
  return english;
}

}  // namespace crmd::api
