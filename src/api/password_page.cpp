#include "api/password_page.hpp"

#include "auth/password_reset.hpp"

namespace crmd::api {

namespace {

std::string Escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

Response Page(int status, std::string_view title, std::string_view body) {
  Response r;
  r.status = status;
  r.content_type = "text/html; charset=utf-8";
  r.headers.emplace_back("Cache-Control", "no-store");
  r.headers.emplace_back("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");  // the token is in the URL
  r.headers.emplace_back("X-Frame-Options", "DENY");
  r.body = "<!doctype html><html><head><meta charset=\"utf-8\"><title>" + std::string(title) +
           "</title><style>body{font-family:sans-serif;max-width:28em;margin:3em auto}</style></head><body><h1>" +
           std::string(title) + "</h1>" + std::string(body) + "</body></html>";
  return r;
}

Response Form(std::string_view token, std::string_view message, int status) {
  std::string body;
  if (!message.empty()) body += "<p role=\"alert\">" + Escape(message) + "</p>";
  body +=
      "<form method=\"post\"><input type=\"hidden\" name=\"token\" value=\"" + Escape(token) +
      "\"><p><label>New password <input type=\"password\" name=\"new_password\" required minlength=\"8\" "
      "autocomplete=\"new-password\"></label></p><p>At least 8 characters, with a lower-case letter, an "
      "upper-case letter and a digit.</p><button type=\"submit\">Change password</button></form>";
  return Page(status, "Choose a new password", body);
}

std::string Param(const Target& target, std::string_view name) {
  for (const auto& [key, value] : target.params)
    if (key == name) return value;
  return {};
}

}  // namespace

Response HandlePasswordPage(const Request& request, const Target& target, auth::Context& ctx) {
  if (!ctx.app) return Page(404, "Not found", "<p>This link is not valid.</p>");
  if (request.method == Method::kGet) return Form(Param(target, "token"), {}, 200);
  if (request.method != Method::kPost) return Page(404, "Not found", "<p>This link is not valid.</p>");
  // The form posts application/x-www-form-urlencoded: the same grammar as a query string.
  auto form = ParseTarget("/?" + request.body);
  if (!form) return Page(400, "Password not changed", "<p>The form could not be read.</p>");
  const std::string token = Param(*form, "token");
  auto outcome = auth::ResetPassword(ctx, token, Param(*form, "new_password"));
  if (!outcome.ok())
    return Page(outcome.error().http_status, "Password not changed", "<p>Too many attempts now; try again later.</p>");
  switch (outcome.value()) {
    case auth::ResetOutcome::kDone:
      return Page(200, "Password changed", "<p>Your password was changed. You can sign in with it now.</p>");
    case auth::ResetOutcome::kWeakPassword:
      return Form(token, "Password does not meet the Password Policy requirements.", 400);
    case auth::ResetOutcome::kInvalidToken:
      return Page(400, "Password not changed", "<p>This link is invalid, expired, or was already used.</p>");
  }
  return Page(400, "Password not changed", "<p>This link is not valid.</p>");
}

}  // namespace crmd::api
