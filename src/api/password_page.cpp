#include "api/password_page.hpp"

#include <algorithm>

#include "auth/password_reset.hpp"
#include "write/reset_tokens.hpp"

namespace crmd::api {

namespace {

Response Form(std::string_view token, std::string_view message, int status, const PageLook& look) {
  std::string body;
  if (!message.empty()) body += "<p role=\"alert\">" + TrHtml(look, message) + "</p>";
  body +=
      "<form method=\"post\"><input type=\"hidden\" name=\"token\" value=\"" + EscapeHtml(token) +
      "\"><p><label for=\"new_password\">" + TrHtml(look, "New password") +
      "</label><input type=\"password\" id=\"new_password\" name=\"new_password\" required minlength=\"8\" "
      "autocomplete=\"new-password\" aria-describedby=\"rule\"></p><p><label for=\"confirm_password\">" +
      TrHtml(look, "Confirm the new password") +
      "</label><input type=\"password\" id=\"confirm_password\" name=\"confirm_password\" required minlength=\"8\" "
      "autocomplete=\"new-password\"></p><p id=\"rule\">" +
      TrHtml(look, "At least 8 characters, with a lower-case letter, an upper-case letter and a digit.") +
      "</p><button type=\"submit\">" + TrHtml(look, "Change password") + "</button></form>";
  return HtmlPage(status, "Choose a new password", body, look);
}

std::string Paragraph(const PageLook& look, std::string_view english) { return "<p>" + TrHtml(look, english) + "</p>"; }

// Where a person goes next from a page that ends a step: signing in, when crmd knows where.
std::string SignInLink(const PageLook& look) {
  if (look.signin_url.empty()) return {};
  return "<p><a class=\"button\" href=\"" + EscapeHtml(look.signin_url) + "\">" + TrHtml(look, "Sign in") + "</a></p>";
}

Response NotValid(int status, const PageLook& look) { return HtmlPage(status, "Not found", Paragraph(look, "This link is not valid."), look); }

}  // namespace

Response HandlePasswordPage(const Request& request, const Target& target, auth::Context& ctx, const PageLook& look) {
  if (!ctx.app) return NotValid(404, look);
  if (request.method == Method::kGet) return Form(target.Param("token"), {}, 200, look);
  if (request.method != Method::kPost) return NotValid(404, look);
  // The form posts application/x-www-form-urlencoded: the same grammar as a query string.
  auto form = ParseTarget("/?" + request.body);
  if (!form) return HtmlPage(400, "Password not changed", Paragraph(look, "The form could not be read."), look);
  const std::string token = form->Param("token");
  // The page's form always sends the confirmation; a client posting the field alone is not asked.
  const bool confirmed = std::any_of(form->params.begin(), form->params.end(), [](const auto& p) { return p.first == "confirm_password"; });
  if (confirmed && form->Param("confirm_password") != form->Param("new_password")) return Form(token, "The two passwords differ.", 400, look);
  auto prepared = auth::PrepareReset(ctx, token, form->Param("new_password"));
  if (!prepared.ok())
    return HtmlPage(prepared.error().http_status, "Password not changed", Paragraph(look, "Too many attempts now; try again later."), look);
  const auto* ready = std::get_if<auth::PreparedReset>(&prepared.value());
  switch (ready ? write::ConsumeResetToken(ctx, *ready) : std::get<auth::ResetOutcome>(prepared.value())) {
    case auth::ResetOutcome::kDone:
      return HtmlPage(200, "Password changed", Paragraph(look, "Your password was changed. You can sign in with it now.") + SignInLink(look), look);
    case auth::ResetOutcome::kWeakPassword:
      return Form(token, "Password does not meet the Password Policy requirements.", 400, look);
    case auth::ResetOutcome::kInvalidToken:
      return HtmlPage(400, "Password not changed",
                      Paragraph(look, "This link is invalid, expired, or was already used.") +
                          (look.forgot_url.empty() ? std::string()
                                                   : "<p><a href=\"" + EscapeHtml(look.forgot_url) + "\">" +
                                                         TrHtml(look, "Forgot your password?") + "</a></p>"),
                      look);
  }
  return NotValid(400, look);
}

Response HandleForgotPasswordPage(const Request& request, const Target& target, auth::Context& ctx, const PageLook& look) {
  if (!ctx.app) return NotValid(404, look);
  const std::string form_html =
      "<form method=\"post\"><p><label for=\"email\">" + TrHtml(look, "Email") +
      "</label><input type=\"email\" id=\"email\" name=\"email\" required autocomplete=\"email\"></p><button type=\"submit\">" +
      TrHtml(look, "Send me a link") + "</button></form>";
  if (request.method == Method::kGet || request.method == Method::kHead) return HtmlPage(200, "Reset your password", form_html, look);
  if (request.method != Method::kPost) return NotValid(404, look);
  auto form = ParseTarget("/?" + request.body);
  if (!form) return HtmlPage(400, "Reset your password", Paragraph(look, "The form could not be read.") + form_html, look);
  auto asked = auth::RequestPasswordReset(ctx, form->Param("email"), write::StoreResetToken);
  if (!asked.ok()) {
    if (asked.error().http_status == 429)
      return HtmlPage(429, "Too many attempts", Paragraph(look, "Too many attempts now; try again later."), look);
    return HtmlPage(asked.error().http_status, "Reset your password", "<p role=\"alert\">" + EscapeHtml(asked.error().message) + "</p>" + form_html, look);
  }
  return HtmlPage(200, "Link sent",
                  Paragraph(look, "If this address belongs to a user of this application, a link to choose a new password is on "
                                  "its way. It works for one hour.") + SignInLink(look),
                  look);
}

}  // namespace crmd::api
