// The pages crmd shows a person in a browser (the password page, the sign-in gate, OAuth): plain
// HTML that runs no script, cannot be framed, sends no referrer and is never cached. They share
// the console's look (web/look.css, compiled in and inlined), fit a phone (viewport), name the
// application by its name, and speak the person's language (api/page_language: `lang`, and
// `dir="rtl"` for Hebrew).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/message.hpp"
#include "api/page_language.hpp"
#include "util/strings.hpp"  // EscapeHtml, for what a page's body holds

namespace crmd::api {

// How a page is dressed: its language, the application's name above its title, and where
// a person goes to sign in (links on the gate's form, the reset page, "Password changed").
struct PageLook {
  Language language = Language::kEnglish;
  std::string app_name;     // plain text; empty: none shown
  std::string forgot_url;   // the "forgot password" page; empty: no link
  std::string signin_url;   // where to sign in after a reset; empty: no link
  // The page's own query without its `lang` parameter (`?...&` or `?`), to which the language
  // links add theirs; empty: no links.
  std::string language_base;
};

// A page titled `title` (plain English text, translated) around `body` (HTML the caller escaped
// and translated).
Response HtmlPage(int status, std::string_view title, std::string_view body, const PageLook& look = {});

// `english` in the look's language.
inline std::string_view Tr(const PageLook& look, std::string_view english) { return Translate(look.language, english); }
// The same, escaped for HTML.
inline std::string TrHtml(const PageLook& look, std::string_view english) { return EscapeHtml(Tr(look, english)); }

}  // namespace crmd::api
