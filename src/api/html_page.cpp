#include "api/html_page.hpp"

#include "api/web_files.hpp"

namespace crmd::api {

namespace {

// web/look.css, inlined: the page loads nothing (its policy allows no stylesheet address), and
// looks the same with the console off.
std::string_view LookCss() {
  static const std::string_view css = [] {
    for (const auto& file : WebFiles())
      if (file.path == "look.css") return file.content;
    return std::string_view();
  }();
  return css;
}

}  // namespace

Response HtmlPage(int status, std::string_view title, std::string_view body, const PageLook& look) {
  Response r;
  r.status = status;
  r.content_type = "text/html; charset=utf-8";
  r.headers.emplace_back("Cache-Control", "no-store");
  r.headers.emplace_back("Content-Security-Policy",
                         "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");  // links may carry a token
  r.headers.emplace_back("X-Frame-Options", "DENY");
  r.headers.emplace_back("Content-Language", std::string(LanguageTag(look.language)));
  const std::string escaped_title = TrHtml(look, title);
  r.body = "<!doctype html><html lang=\"" + std::string(LanguageTag(look.language)) + "\"" +
           (RightToLeft(look.language) ? " dir=\"rtl\"" : "") +
           "><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>" +
           escaped_title + (look.app_name.empty() ? "" : " · " + EscapeHtml(look.app_name)) + "</title><style>" +
           std::string(LookCss()) + "</style></head><body class=\"page\"><main>";
  // A person's choice of language, which then travels in the address (api/page_language).
  if (!look.language_base.empty()) {
    const std::string base = EscapeHtml(look.language_base);
    r.body += "<nav class=\"languages\" aria-label=\"Language\"><a href=\"" + base + "lang=en\" lang=\"en\" hreflang=\"en\">English</a> · <a href=\"" +
              base + "lang=he\" lang=\"he\" hreflang=\"he\">עברית</a></nav>";
  }
  if (!look.app_name.empty()) r.body += "<p class=\"app-name\">" + EscapeHtml(look.app_name) + "</p>";
  r.body += "<h1>" + escaped_title + "</h1>" + std::string(body) + "</main></body></html>";
  return r;
}

}  // namespace crmd::api
