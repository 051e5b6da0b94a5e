// The language of the pages crmd renders (password reset, sign-in gate, OAuth): English or
// Hebrew, from the page's `lang` parameter (a person's choice, kept in the form's address) or else
// the browser's Accept-Language, in its order of preference. Hebrew pages are laid out right to
// left. The English sentence is the key of its translation: a sentence with none shows in English.
#pragma once

#include <string_view>

#include "api/message.hpp"
#include "api/target.hpp"

namespace crmd::api {

enum class Language { kEnglish, kHebrew };

// `lang` (`en`, `he`) wins; then the first language of Accept-Language crmd has (q-values are
// honoured, `*` and unknown tags skipped); English when none.
Language PageLanguage(const Request& request, const Target& target);

std::string_view LanguageTag(Language language);  // "en", "he"
bool RightToLeft(Language language);

// `english` in `language` (itself when untranslated).
std::string_view Translate(Language language, std::string_view english);

}  // namespace crmd::api
