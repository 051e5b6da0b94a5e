#include "api/password_page.hpp"

#include "api/html_page.hpp"
#include "auth/password_reset.hpp"
#include "write/reset_tokens.hpp"

namespace crmd::api {

namespace {

Response Form(std::string_view token, std::string_view message, int status) {
  std::string body;
  if (!message.empty()) body += "<p role=\"alert\">" + EscapeHtml(message) + "</p>";
  body +=
      "<form method=\"post\"><input type=\"hidden\" name=\"token\" value=\"" + EscapeHtml(token) +
      "\"><p><label>New password <input type=\"password\" name=\"new_password\" required minlength=\"8\" "
      "autocomplete=\"new-password\"></label></p><p>At least 8 characters, with a lower-case letter, an "
      "upper-case letter and a digit.</p><button type=\"submit\">Change password</button></form>";
  return HtmlPage(status, "Choose a new password", body);
}

}  // namespace

Response HandlePasswordPage(const Request& request, const Target& target, auth::Context& ctx) {
  if (!ctx.app) return HtmlPage(404, "Not found", "<p>This link is not valid.</p>");
  if (request.method == Method::kGet) return Form(target.Param("token"), {}, 200);
  if (request.method != Method::kPost) return HtmlPage(404, "Not found", "<p>This link is not valid.</p>");
  // The form posts application/x-www-form-urlencoded: the same grammar as a query string.
  auto form = ParseTarget("/?" + request.body);
  if (!form) return HtmlPage(400, "Password not changed", "<p>The form could not be read.</p>");
  const std::string token = form->Param("token");
  auto prepared = auth::PrepareReset(ctx, token, form->Param("new_password"));
  if (!prepared.ok())
    return HtmlPage(prepared.error().http_status, "Password not changed", "<p>Too many attempts now; try again later.</p>");
  const auto* ready = std::get_if<auth::PreparedReset>(&prepared.value());
  switch (ready ? write::ConsumeResetToken(ctx, *ready) : std::get<auth::ResetOutcome>(prepared.value())) {
    case auth::ResetOutcome::kDone:
      return HtmlPage(200, "Password changed", "<p>Your password was changed. You can sign in with it now.</p>");
    case auth::ResetOutcome::kWeakPassword:
      return Form(token, "Password does not meet the Password Policy requirements.", 400);
    case auth::ResetOutcome::kInvalidToken:
      return HtmlPage(400, "Password not changed", "<p>This link is invalid, expired, or was already used.</p>");
  }
  return HtmlPage(400, "Password not changed", "<p>This link is not valid.</p>");
}

}  // namespace crmd::api
