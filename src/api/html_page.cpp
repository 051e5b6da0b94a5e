#include "api/html_page.hpp"

namespace crmd::api {

Response HtmlPage(int status, std::string_view title, std::string_view body) {
  Response r;
  r.status = status;
  r.content_type = "text/html; charset=utf-8";
  r.headers.emplace_back("Cache-Control", "no-store");
  r.headers.emplace_back("Content-Security-Policy",
                         "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");  // links may carry a token
  r.headers.emplace_back("X-Frame-Options", "DENY");
  const std::string escaped_title = EscapeHtml(title);
  r.body = "<!doctype html><html><head><meta charset=\"utf-8\"><title>" + escaped_title +
           "</title><style>body{font-family:sans-serif;max-width:28em;margin:3em auto}</style></head><body><h1>" +
           escaped_title + "</h1>" + std::string(body) + "</body></html>";
  return r;
}

}  // namespace crmd::api
