#include "api/signin_gate.hpp"

#include "api/html_page.hpp"
#include "auth/login.hpp"
#include "files/file_names.hpp"

namespace crmd::api {

namespace {

// The path part of the public URL (`https://host/crm` → `/crm`): where the browser sees crmd.
std::string_view BasePath(std::string_view public_url) {
  const auto scheme = public_url.find("://");
  const auto slash = public_url.find('/', scheme == std::string_view::npos ? 0 : scheme + 3);
  return slash == std::string_view::npos ? std::string_view() : public_url.substr(slash);
}

// Whether the gate may send a browser to `url`: an address of the application's files, nothing a
// header or an attribute could be broken out of.
bool IsReturnAddress(const app::Application& app, std::string_view url) {
  const std::string base = FilesBase(app);
  if (!url.starts_with(base) || url.size() == base.size()) return false;
  for (unsigned char c : url)
    if (c <= 0x20 || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '\\') return false;
  return true;
}

Response Form(const app::Application& app, std::string_view return_to, std::string_view message, int status) {
  return SignInForm("Sign in to " + app.id(), {{"return", std::string(return_to)}}, message, status);
}

Response NotValid() { return HtmlPage(400, "Link not valid", "<p>This link is not valid.</p>"); }

// Back to the file, signed in: the session's token in a cookie only the application's file
// addresses receive.
Response SignedIn(const app::Application& app, std::string_view token, const std::string& return_to) {
  const auto& settings = app.settings();
  std::string cookie = std::string(kSessionCookie) + "=" + std::string(token) + "; Path=" +
                       std::string(BasePath(settings.public_url)) + "/" + settings.prefix + "/files/" + app.id() +
                       "/; HttpOnly; SameSite=Lax";
  if (settings.public_url.starts_with("https://")) cookie += "; Secure";
  Response r = HtmlPage(303, "Signed in", "<p>Signed in.</p>");
  r.headers.emplace_back("Set-Cookie", std::move(cookie));
  r.headers.emplace_back("Location", return_to);
  return r;
}

}  // namespace

Response SignInForm(std::string_view heading, const std::vector<std::pair<std::string, std::string>>& hidden,
                    std::string_view message, int status) {
  std::string body;
  if (!message.empty()) body += "<p role=\"alert\">" + EscapeHtml(message) + "</p>";
  body += "<form method=\"post\">";
  for (const auto& [name, value] : hidden)
    body += "<input type=\"hidden\" name=\"" + EscapeHtml(name) + "\" value=\"" + EscapeHtml(value) + "\">";
  body +=
      "<p><label>Username <input name=\"username\" required autocomplete=\"username\"></label></p>"
      "<p><label>Password <input type=\"password\" name=\"password\" required "
      "autocomplete=\"current-password\"></label></p><button type=\"submit\">Sign in</button></form>";
  return HtmlPage(status, heading, body);
}

int SignInRefusedStatus(const ApiError& error) { return error.http_status == 429 ? 429 : 401; }

std::string FilesBase(const app::Application& app) {
  const auto& settings = app.settings();
  return settings.public_url + "/" + settings.prefix + "/files/" + app.id() + "/";
}

Response HandleSignInGate(const Request& request, const Target& target, auth::Context& ctx) {
  if (!ctx.app) return HtmlPage(404, "Not found", "<p>This link is not valid.</p>");
  const app::Application& app = *ctx.app;
  if (request.method == Method::kGet || request.method == Method::kHead) {
    const std::string return_to = target.Param("return");
    if (!IsReturnAddress(app, return_to)) return NotValid();
    return Form(app, return_to, {}, 200);
  }
  if (request.method != Method::kPost) return HtmlPage(404, "Not found", "<p>This link is not valid.</p>");
  // The form posts application/x-www-form-urlencoded: the same grammar as a query string.
  auto form = ParseTarget("/?" + request.body);
  if (!form) return NotValid();
  const std::string return_to = form->Param("return");
  if (!IsReturnAddress(app, return_to)) return NotValid();
  auto login = auth::LogIn(ctx, form->Param("username"), form->Param("password"));
  if (!login.ok()) return Form(app, return_to, login.error().message, SignInRefusedStatus(login.error()));
  const auto* token = login.value().if_contains("sessionToken");
  if (!token || !token->is_string()) return Form(app, return_to, "Sign-in failed; try again.", 500);
  return SignedIn(app, token->get_string(), return_to);
}

Response RedirectToGate(const app::Application& app, const std::string& return_to) {
  const auto& settings = app.settings();
  std::string location;
  if (settings.signin_url.empty()) {
    location = settings.public_url + "/" + settings.prefix + "/apps/" + files::EncodeSegment(app.id()) +
               "/signin?return=" + files::EncodeSegment(return_to);
  } else {
    location = settings.signin_url + (settings.signin_url.find('?') == std::string::npos ? "?" : "&") +
               "app=" + files::EncodeSegment(app.id()) + "&return=" + files::EncodeSegment(return_to);
  }
  Response r = HtmlPage(302, "Sign in", "<p>Sign in to open this file.</p>");
  r.headers.emplace_back("Location", std::move(location));
  return r;
}

std::optional<std::string> SessionCookie(const Request& request) {
  auto header = request.Header("cookie");
  if (!header) return std::nullopt;
  std::string_view rest = *header;
  while (!rest.empty()) {
    const auto semi = rest.find(';');
    std::string_view pair = rest.substr(0, semi);
    rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    if (pair.starts_with(kSessionCookie) && pair.size() > kSessionCookie.size() && pair[kSessionCookie.size()] == '=')
      return std::string(pair.substr(kSessionCookie.size() + 1));
  }
  return std::nullopt;
}

}  // namespace crmd::api
