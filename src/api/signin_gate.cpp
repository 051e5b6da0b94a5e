#include "api/signin_gate.hpp"

#include <algorithm>
#include <cctype>

#include "api/html_page.hpp"
#include "auth/form_token.hpp"
#include "auth/login.hpp"
#include "files/file_names.hpp"
#include "util/strings.hpp"
#include "write/login_attempt.hpp"

namespace crmd::api {

namespace {

// What the gate's form tokens are for (auth/form_token.hpp).
constexpr std::string_view kGatePurpose = "signin-gate";

// The path part of the public URL (`https://host/crm` → `/crm`): where the browser sees crmd.
std::string_view BasePath(std::string_view public_url) {
  const auto scheme = public_url.find("://");
  const auto slash = public_url.find('/', scheme == std::string_view::npos ? 0 : scheme + 3);
  return slash == std::string_view::npos ? std::string_view() : public_url.substr(slash);
}

// Where the gate's form is served and posted: the only path its cookie goes to.
std::string GatePath(const app::Application& app) {
  const auto& settings = app.settings();
  return std::string(BasePath(settings.public_url)) + "/" + settings.prefix + "/apps/" + app.id() + "/signin";
}

// `scheme://host[:port]` of `url` as a browser's Origin header spells it: lower case, without the
// scheme's default port.
std::string OriginOf(std::string_view url) {
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  std::string origin(url.substr(0, url.find_first_of("/?#", scheme + 3)));
  std::transform(origin.begin(), origin.end(), origin.begin(), [](unsigned char c) { return std::tolower(c); });
  if (origin.starts_with("http://") && origin.ends_with(":80")) origin.resize(origin.size() - 3);
  if (origin.starts_with("https://") && origin.ends_with(":443")) origin.resize(origin.size() - 4);
  return origin;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// `segment` percent-decoded; nullopt for a `%` not followed by two hex digits.
std::optional<std::string> DecodeSegment(std::string_view segment) {
  std::string out;
  out.reserve(segment.size());
  for (std::size_t i = 0; i < segment.size(); ++i) {
    if (segment[i] != '%') {
      out.push_back(segment[i]);
      continue;
    }
    if (i + 2 >= segment.size() || HexValue(segment[i + 1]) < 0 || HexValue(segment[i + 2]) < 0) return std::nullopt;
    out.push_back(static_cast<char>(HexValue(segment[i + 1]) * 16 + HexValue(segment[i + 2])));
    i += 2;
  }
  return out;
}

// Whether the gate may send a browser to `url`: an address of the application's files, nothing a
// header or an attribute could be broken out of, and nothing a browser would resolve elsewhere.
// Each path segment, decoded, is a name: never empty, `.` or `..`, and without `/`, `\` or a
// control character (issue 31 #12: `<files>/../../health` and its percent-encoded spellings).
bool IsReturnAddress(const app::Application& app, std::string_view url) {
  const std::string base = FilesBase(app);
  if (!url.starts_with(base) || url.size() == base.size()) return false;
  for (unsigned char c : url)
    if (c <= 0x20 || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '\\') return false;
  std::string_view path = url.substr(base.size());
  path = path.substr(0, path.find_first_of("?#"));
  for (std::string_view segment : Split(path, '/')) {
    auto name = DecodeSegment(segment);
    if (!name || name->empty() || *name == "." || *name == "..") return false;
    for (unsigned char c : *name)
      if (c < 0x20 || c == 0x7f || c == '/' || c == '\\') return false;
  }
  return true;
}

Response NotValid(const PageLook& look) { return HtmlPage(400, "Link not valid", "<p>" + TrHtml(look, "This link is not valid.") + "</p>", look); }

// The gate's cookie: the nonce of the form's token. Strict: a post that another site's page
// makes, or that follows a navigation from one, never carries it.
// Secure when the public URL is https, or a trusted proxy says the browser came over HTTPS.
bool OverHttps(const app::Application& app, const Request& request) {
  return request.https || app.settings().public_url.starts_with("https://");
}

std::string GateCookie(const app::Application& app, const Request& request, std::string_view nonce) {
  std::string cookie = std::string(kGateCookie) + "=" + std::string(nonce) + "; Path=" + GatePath(app) +
                       "; HttpOnly; SameSite=Strict";
  if (OverHttps(app, request)) cookie += "; Secure";
  return cookie;
}

// The form, with the token of the browser's gate cookie: the one it came with, else a new one set
// with the page.
Response Form(const app::Application& app, const auth::AppCredentials& credentials, const Request& request,
              std::string_view return_to, std::string_view message, int status, const PageLook& look) {
  auto nonce = CookieValue(request, kGateCookie);
  const bool fresh = !nonce || !auth::IsFormNonce(*nonce);
  if (fresh) nonce = auth::NewFormNonce();
  Response r = SignInForm(std::string(Tr(look, "Sign in to")) + " " + (look.app_name.empty() ? app.id() : look.app_name),
                          {{"return", std::string(return_to)}, {"csrf", auth::FormToken(credentials, kGatePurpose, *nonce)}},
                          message, status, look);
  if (fresh) r.headers.emplace_back("Set-Cookie", GateCookie(app, request, *nonce));
  return r;
}

// Whether a post is the gate's own form's, or the operator's `--signin-url` page's (a site of its
// own, which holds no token): what another site's page cannot make a browser send (issue 31 #12).
// Origin and Sec-Fetch-Site are looked at when a browser sends them; the token always.
bool FromItsForm(const Request& request, const Target& form, const app::Application& app,
                 const auth::AppCredentials& credentials) {
  const auto& settings = app.settings();
  if (auto header = request.Header("origin")) {
    const std::string origin = OriginOf(*header);
    if (!settings.signin_url.empty() && origin == OriginOf(settings.signin_url)) return true;
    // `null`: what browsers send from a page that sends no referrer, as the gate's own does.
    if (origin != "null" && origin != OriginOf(settings.public_url)) return false;
  }
  if (auto site = request.Header("sec-fetch-site"); site && *site != "same-origin" && *site != "none") return false;
  auto nonce = CookieValue(request, kGateCookie);
  return nonce && auth::FormTokenMatches(credentials, kGatePurpose, *nonce, form.Param("csrf"));
}

// Back to the file, signed in: the session's token in a cookie only the application's file
// addresses receive.
Response SignedIn(const app::Application& app, const Request& request, std::string_view token, const std::string& return_to,
                  const PageLook& look) {
  const auto& settings = app.settings();
  std::string cookie = std::string(kSessionCookie) + "=" + std::string(token) + "; Path=" +
                       std::string(BasePath(settings.public_url)) + "/" + settings.prefix + "/files/" + app.id() +
                       "/; HttpOnly; SameSite=Lax";
  if (OverHttps(app, request)) cookie += "; Secure";
  Response r = HtmlPage(303, "Signed in", "<p>" + TrHtml(look, "Signed in.") + "</p>", look);
  r.headers.emplace_back("Set-Cookie", std::move(cookie));
  r.headers.emplace_back("Location", return_to);
  return r;
}

}  // namespace

Response SignInForm(std::string_view heading, const std::vector<std::pair<std::string, std::string>>& hidden,
                    std::string_view message, int status, const PageLook& look) {
  std::string body;
  if (!message.empty()) body += "<p role=\"alert\">" + TrHtml(look, message) + "</p>";
  body += "<form method=\"post\">";
  for (const auto& [name, value] : hidden)
    body += "<input type=\"hidden\" name=\"" + EscapeHtml(name) + "\" value=\"" + EscapeHtml(value) + "\">";
  body +=
      "<p><label for=\"username\">" + TrHtml(look, "Username") +
      "</label><input id=\"username\" name=\"username\" required autocomplete=\"username\"></p><p><label for=\"password\">" +
      TrHtml(look, "Password") +
      "</label><input type=\"password\" id=\"password\" name=\"password\" required autocomplete=\"current-password\"></p>"
      "<button type=\"submit\">" + TrHtml(look, "Sign in") + "</button></form>";
  if (!look.forgot_url.empty())
    body += "<p><a href=\"" + EscapeHtml(look.forgot_url) + "\">" + TrHtml(look, "Forgot your password?") + "</a></p>";
  return HtmlPage(status, heading, body, look);
}

int SignInRefusedStatus(const ApiError& error) { return error.http_status == 429 ? 429 : 401; }

std::string FilesBase(const app::Application& app) {
  const auto& settings = app.settings();
  return settings.public_url + "/" + settings.prefix + "/files/" + app.id() + "/";
}

Response HandleSignInGate(const Request& request, const Target& target, auth::Context& ctx, AddressRate& rate,
                          const PageLook& look) {
  if (!ctx.app || !ctx.credentials) return HtmlPage(404, "Not found", "<p>" + TrHtml(look, "This link is not valid.") + "</p>", look);
  const app::Application& app = *ctx.app;
  const auth::AppCredentials& credentials = *ctx.credentials;
  if (request.method == Method::kGet || request.method == Method::kHead) {
    const std::string return_to = target.Param("return");
    if (!IsReturnAddress(app, return_to)) return NotValid(look);
    return Form(app, credentials, request, return_to, {}, 200, look);
  }
  if (request.method != Method::kPost) return HtmlPage(404, "Not found", "<p>" + TrHtml(look, "This link is not valid.") + "</p>", look);
  // Every post counts, whatever comes of it: the gate is a door anyone can knock at.
  if (!rate.Take(ctx.remote_ip)) {
    Response r = HtmlPage(429, "Too many attempts",
                          "<p>" + TrHtml(look, "Too many sign-in attempts from this address; try again in a minute.") + "</p>", look);
    r.headers.emplace_back("Retry-After", "60");
    return r;
  }
  // The form posts application/x-www-form-urlencoded: the same grammar as a query string.
  auto form = ParseTarget("/?" + request.body);
  if (!form) return NotValid(look);
  const std::string return_to = form->Param("return");
  if (!IsReturnAddress(app, return_to)) return NotValid(look);
  if (!FromItsForm(request, *form, app, credentials))
    return Form(app, credentials, request, return_to, "This form expired or was not sent from its page; sign in again.", 403, look);
  auto check = auth::CheckPassword(ctx, form->Param("username"), form->Param("password"));
  auto login = check.ok() ? write::RecordLogin(ctx, check.value()) : Result<boost::json::object>(check.error());
  if (!login.ok()) return Form(app, credentials, request, return_to, login.error().message, SignInRefusedStatus(login.error()), look);
  const auto* token = login.value().if_contains("sessionToken");
  if (!token || !token->is_string()) return Form(app, credentials, request, return_to, "Sign-in failed; try again.", 500, look);
  return SignedIn(app, request, token->get_string(), return_to, look);
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

std::optional<std::string> CookieValue(const Request& request, std::string_view name) {
  auto header = request.Header("cookie");
  if (!header) return std::nullopt;
  std::string_view rest = *header;
  while (!rest.empty()) {
    const auto semi = rest.find(';');
    std::string_view pair = rest.substr(0, semi);
    rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    if (pair.starts_with(name) && pair.size() > name.size() && pair[name.size()] == '=')
      return std::string(pair.substr(name.size() + 1));
  }
  return std::nullopt;
}

std::optional<std::string> SessionCookie(const Request& request) { return CookieValue(request, kSessionCookie); }

}  // namespace crmd::api
