#include "api/oauth.hpp"

#include <sodium.h>

#include <cstring>
#include <variant>

#include "api/html_page.hpp"
#include "api/signin_gate.hpp"
#include "app/application.hpp"
#include "auth/login.hpp"
#include "auth/oauth.hpp"
#include "util/json.hpp"
#include "util/strings.hpp"
#include "write/login_attempt.hpp"
#include "write/oauth_grants.hpp"

namespace crmd::api {

namespace json = boost::json;
namespace oauth = auth::oauth;

namespace {

std::string Issuer(const app::Application& app) { return app.settings().public_url + "/oauth/" + app.id(); }

Response NoStore(Response r) {
  r.headers.emplace_back("Cache-Control", "no-store");
  r.headers.emplace_back("Pragma", "no-cache");
  return r;
}

Response OAuthError(const oauth::Error& e) {
  json::object body{{"error", e.error}};
  if (!e.description.empty()) body["error_description"] = e.description;
  return NoStore(JsonResponse(e.status, body));
}

Response NotFound() { return ErrorResponse(ApiError{404, 0, "Not found", ErrorBody::kErrorOnly}); }

Response ProtectedResourceMetadata(const app::Application& app) {
  return JsonResponse(200, json::object{{"resource", McpResource(app)},
                                        {"authorization_servers", json::array{Issuer(app)}},
                                        {"scopes_supported", json::array{oauth::kScope}},
                                        {"bearer_methods_supported", json::array{"header"}},
                                        {"resource_name", "crmd " + app.id()}});
}

Response AuthorizationServerMetadata(const app::Application& app) {
  const std::string issuer = Issuer(app);
  return JsonResponse(200, json::object{{"issuer", issuer},
                                        {"authorization_endpoint", issuer + "/authorize"},
                                        {"token_endpoint", issuer + "/token"},
                                        {"registration_endpoint", issuer + "/register"},
                                        {"revocation_endpoint", issuer + "/revoke"},
                                        {"response_types_supported", json::array{"code"}},
                                        {"grant_types_supported", json::array{"authorization_code", "refresh_token"}},
                                        {"code_challenge_methods_supported", json::array{"S256"}},
                                        {"token_endpoint_auth_methods_supported", json::array{"none", "client_secret_post", "client_secret_basic"}},
                                        {"revocation_endpoint_auth_methods_supported", json::array{"none", "client_secret_post", "client_secret_basic"}},
                                        {"scopes_supported", json::array{oauth::kScope}},
                                        {"authorization_response_iss_parameter_supported", true}});
}

Response RegisterClient(const Request& request, const auth::AppCredentials& credentials) {
  json::value storage;
  auto body = BodyObject(request, storage);
  if (!body.ok()) return OAuthError({400, "invalid_client_metadata", "the body must be a JSON object"});
  auto registered = oauth::Register(credentials, *body.value());
  if (const auto* error = std::get_if<oauth::Error>(&registered)) return OAuthError(*error);
  return NoStore(JsonResponse(201, std::get<json::object>(registered)));
}

// The parameters of an authorization request, as a query string or a posted form.
struct AuthorizeParams {
  std::string response_type, client_id, redirect_uri, challenge, method, state, scope, resource;

  static AuthorizeParams From(const Target& t) {
    return {t.Param("response_type"), t.Param("client_id"), t.Param("redirect_uri"), t.Param("code_challenge"),
            t.Param("code_challenge_method"), t.Param("state"), t.Param("scope"), t.Param("resource")};
  }
  std::vector<std::pair<std::string, std::string>> Hidden() const {
    return {{"response_type", response_type}, {"client_id", client_id}, {"redirect_uri", redirect_uri},
            {"code_challenge", challenge}, {"code_challenge_method", method}, {"state", state},
            {"scope", scope}, {"resource", resource}};
  }
};

std::string WithQuery(const std::string& uri, const std::vector<std::pair<std::string, std::string>>& params) {
  std::string out = uri;
  char joiner = uri.find('?') == std::string::npos ? '?' : '&';
  for (const auto& [name, value] : params) {
    if (value.empty()) continue;
    out += joiner;
    out += name + "=" + PercentEncode(value);
    joiner = '&';
  }
  return out;
}

Response RedirectTo(const std::string& location) {
  Response r = HtmlPage(302, "Redirecting", "<p>Returning to the application.</p>");
  r.headers.emplace_back("Location", location);
  return r;
}

Response ErrorPage(int status, std::string_view text) { return HtmlPage(status, "Cannot sign in", "<p>" + EscapeHtml(text) + "</p>"); }

// Checks the request; either a client and redirect to continue with, or the answer (a page for a
// client or redirect crmd cannot trust; a redirect with the error otherwise).
struct Checked {
  oauth::Client client;
  oauth::Authorization authorization;
};
std::variant<Checked, Response> CheckAuthorize(const app::Application& app, const auth::AppCredentials& credentials,
                                               AuthorizeParams p) {
  auto client = oauth::FindClient(credentials, p.client_id);
  if (!client) return ErrorPage(400, "This application link names an unknown client; register it again.");
  if (p.redirect_uri.empty() && client->redirect_uris.size() == 1) p.redirect_uri = client->redirect_uris[0];
  if (!oauth::RedirectAllowed(*client, p.redirect_uri)) return ErrorPage(400, "The redirect address is not one the client registered.");
  auto fail = [&](std::string_view error, std::string_view description) -> Response {
    return RedirectTo(WithQuery(p.redirect_uri, {{"error", std::string(error)}, {"error_description", std::string(description)},
                                                 {"state", p.state}, {"iss", Issuer(app)}}));
  };
  if (p.response_type != "code") return fail("unsupported_response_type", "response_type must be code");
  if (p.challenge.size() < 43 || p.challenge.size() > 128 || p.method != "S256")
    return fail("invalid_request", "PKCE is required: code_challenge with code_challenge_method S256");
  if (!p.resource.empty() && p.resource != McpResource(app)) return fail("invalid_target", "resource must be " + McpResource(app));
  return Checked{*client, {p.client_id, p.redirect_uri, p.challenge, p.state, McpResource(app)}};
}

std::string ClientLabel(const oauth::Client& client, const std::string& redirect_uri) {
  const auto scheme = redirect_uri.find("://");
  std::string host = scheme == std::string::npos ? redirect_uri : redirect_uri.substr(scheme + 3);
  host = host.substr(0, host.find_first_of("/?"));
  return (client.name.empty() ? std::string("An application") : client.name) + " (" + host + ")";
}

// The application as a person knows it: its name, else its id.
std::string AppName(const auth::AppCredentials& credentials) { return credentials.name.empty() ? credentials.app_id : credentials.name; }

// The OAuth pages' look: the browser's language, the application's name.
PageLook LookOf(const Request& request, const Target& target, const auth::AppCredentials& credentials) {
  PageLook look;
  look.language = PageLanguage(request, target);
  look.app_name = AppName(credentials);
  return look;
}

Response ConsentPage(const app::Application& app, const auth::AppCredentials& credentials, const Checked& checked,
                     const std::string& user_id, const std::string& username, const PageLook& look) {
  const std::string ticket = oauth::SignTicket(credentials, checked.authorization, user_id);
  std::string body = "<p>" + EscapeHtml(ClientLabel(checked.client, checked.authorization.redirect_uri)) +
                     " asks to use the CRM application <strong>" + EscapeHtml(AppName(credentials)) + "</strong> as <strong>" +
                     EscapeHtml(username) + "</strong>, with the scope <code>mcp</code>: it may read and change the "
                     "records your role and your MCP permissions allow, as you could.</p>"
                     "<form method=\"post\"><input type=\"hidden\" name=\"ticket\" value=\"" + EscapeHtml(ticket) +
                     "\"><button type=\"submit\" name=\"decision\" value=\"allow\">Allow</button> "
                     "<button type=\"submit\" name=\"decision\" value=\"deny\">Deny</button></form>";
  Response page = HtmlPage(200, "Allow access to " + AppName(credentials) + "?", body, look);
  // The form's answer redirects to the client: browsers hold a redirect after a form to the
  // form-action rule too.
  const std::string& to = checked.authorization.redirect_uri;
  const auto scheme = to.find("://");
  const std::string origin = to.substr(0, to.find_first_of("/?", scheme == std::string::npos ? 0 : scheme + 3));
  for (auto& [name, value] : page.headers)
    if (name == "Content-Security-Policy")
      value = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' " + origin + "; frame-ancestors 'none'";
  return page;
}

// The form's decision: a code (allow) or access_denied, back to the client.
Response Decide(auth::Context& ctx, const Target& form) {
  const app::Application& app = *ctx.app;
  auto ticket = oauth::ReadTicket(*ctx.credentials, form.Param("ticket"));
  if (!ticket) return ErrorPage(400, "This sign-in expired; start again from the application.");
  const oauth::Authorization& request = ticket->request;
  auto decided = write::DecideTicket(ctx, *ticket, form.Param("decision") == "allow");
  if (const auto* error = std::get_if<oauth::Error>(&decided)) {
    if (error->status == 400) return ErrorPage(400, "This sign-in was already used; start again from the application.");
    return ErrorPage(500, "The sign-in could not be completed; try again.");
  }
  const auto& code = std::get<std::optional<std::string>>(decided);
  std::vector<std::pair<std::string, std::string>> params;
  if (code) params = {{"code", *code}, {"state", request.state}, {"iss", Issuer(app)}};
  else params = {{"error", "access_denied"}, {"state", request.state}, {"iss", Issuer(app)}};
  Response r = RedirectTo(WithQuery(request.redirect_uri, params));
  return r;
}

Response Authorize(const Request& request, const Target& target, auth::Context& ctx) {
  const app::Application& app = *ctx.app;
  const auth::AppCredentials& credentials = *ctx.credentials;
  if (request.method == Method::kGet || request.method == Method::kHead) {
    auto checked = CheckAuthorize(app, credentials, AuthorizeParams::From(target));
    if (auto* answer = std::get_if<Response>(&checked)) return std::move(*answer);
    const auto& c = std::get<Checked>(checked);
    const PageLook look = LookOf(request, target, credentials);
    return SignInForm(std::string(Tr(look, "Sign in to")) + " " + look.app_name + " · " + ClientLabel(c.client, c.authorization.redirect_uri),
                      AuthorizeParams::From(target).Hidden(), {}, 200, look);
  }
  if (request.method != Method::kPost) return NotFound();
  auto form = ParseTarget("/?" + request.body);
  if (!form) return ErrorPage(400, "The form could not be read.");
  if (!form->Param("ticket").empty()) return Decide(ctx, *form);
  const AuthorizeParams params = AuthorizeParams::From(*form);
  auto checked = CheckAuthorize(app, credentials, params);
  if (auto* answer = std::get_if<Response>(&checked)) return std::move(*answer);
  const auto& c = std::get<Checked>(checked);
  const PageLook look = LookOf(request, *form, credentials);
  const std::string heading =
      std::string(Tr(look, "Sign in to")) + " " + look.app_name + " · " + ClientLabel(c.client, c.authorization.redirect_uri);
  const std::string username = form->Param("username");
  auto check = auth::CheckPassword(ctx, username, form->Param("password"));
  auto user = check.ok() ? write::RecordLogin(ctx, check.value(), /*open_session=*/false) : Result<json::object>(check.error());
  if (!user.ok()) return SignInForm(heading, params.Hidden(), user.error().message, SignInRefusedStatus(user.error()), look);
  // Spec §5.6: no MCP access without one of the user's switches, the owner's included.
  const auto* switches = user.value().if_contains("mcpPermissions");
  // Issue 34: back to the client, as OAuth answers a refusal (RFC 6749 §4.1.2.1), not a page that
  // never returns there.
  if (!switches || oauth::SwitchesOf(switches->is_array() ? ToJson(*switches) : std::string()).empty())
    return RedirectTo(WithQuery(c.authorization.redirect_uri,
                                {{"error", "access_denied"},
                                 {"error_description", "This user has no MCP access. An administrator grants it with the user's MCP permissions."},
                                 {"state", c.authorization.state},
                                 {"iss", Issuer(app)}}));
  const auto* id = user.value().if_contains("objectId");
  return ConsentPage(app, credentials, c, id && id->is_string() ? std::string(id->get_string()) : std::string(), username, look);
}

// RFC 6749 §2.3.1: client_secret_basic (percent-encoded id and secret in Basic) or the form's.
std::optional<oauth::Client> AuthenticateClient(const Request& request, const Target& form,
                                                const auth::AppCredentials& credentials, bool& failed_basic) {
  std::string id = form.Param("client_id"), secret = form.Param("client_secret");
  if (auto header = request.Header("authorization"); header && header->size() > 6 &&
                                                    (header->starts_with("Basic ") || header->starts_with("basic "))) {
    const std::string_view encoded = header->substr(6);
    std::string decoded(encoded.size(), '\0');
    std::size_t length = 0;
    if (sodium_base642bin(reinterpret_cast<unsigned char*>(decoded.data()), decoded.size(), encoded.data(), encoded.size(),
                          nullptr, &length, nullptr, sodium_base64_VARIANT_ORIGINAL) == 0) {
      decoded.resize(length);
      const auto colon = decoded.find(':');
      if (auto parts = ParseTarget("/?a=" + decoded.substr(0, colon) + "&b=" + (colon == std::string::npos ? "" : decoded.substr(colon + 1)))) {
        id = parts->Param("a");
        secret = parts->Param("b");
      }
    }
    failed_basic = true;
  }
  auto client = oauth::FindClient(credentials, id);
  if (!client) return std::nullopt;
  if (client->auth_method != "none" && !oauth::ClientSecretMatches(credentials, *client, secret)) return std::nullopt;
  failed_basic = false;
  return client;
}

Response Token(const Request& request, auth::Context& ctx) {
  auto form = ParseTarget("/?" + request.body);
  if (!form) return OAuthError({400, "invalid_request", "the body must be application/x-www-form-urlencoded"});
  bool basic = false;
  auto client = AuthenticateClient(request, *form, *ctx.credentials, basic);
  if (!client) {
    Response r = OAuthError({401, "invalid_client", "unknown client or wrong client credentials"});
    if (basic) r.headers.emplace_back("WWW-Authenticate", "Basic realm=\"" + Issuer(*ctx.app) + "\"");
    return r;
  }
  const std::string grant = form->Param("grant_type");
  std::variant<oauth::Tokens, oauth::Error> outcome = oauth::Error{400, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token"};
  if (grant == "authorization_code")
    outcome = write::SpendGrant(ctx, *client, oauth::CodeExchange(form->Param("code"), form->Param("code_verifier"),
                                                                  form->Param("redirect_uri"), form->Param("resource")));
  else if (grant == "refresh_token")
    outcome = write::SpendGrant(ctx, *client, oauth::RefreshExchange(form->Param("refresh_token"), form->Param("resource")));
  if (const auto* error = std::get_if<oauth::Error>(&outcome)) return OAuthError(*error);
  return NoStore(JsonResponse(200, oauth::TokenAnswer(std::get<oauth::Tokens>(outcome))));
}

Response Revoke(const Request& request, auth::Context& ctx) {
  auto form = ParseTarget("/?" + request.body);
  if (!form) return OAuthError({400, "invalid_request", "the body must be application/x-www-form-urlencoded"});
  bool basic = false;
  if (!AuthenticateClient(request, *form, *ctx.credentials, basic)) return OAuthError({401, "invalid_client", "unknown client or wrong client credentials"});
  write::RevokeGrant(ctx, form->Param("token"));
  return NoStore(JsonResponse(200, json::object{}));  // RFC 7009: also for a token that is unknown
}

}  // namespace

std::string McpResource(const app::Application& app) { return app.settings().public_url + "/mcp/" + app.id(); }

std::string ProtectedResourceMetadataUrl(const app::Settings& settings, std::string_view app_id) {
  return settings.public_url + "/.well-known/oauth-protected-resource/mcp/" + std::string(app_id);
}

Response HandleOAuth(const Request& request, const Target& target, auth::Context& ctx) {
  if (!ctx.app || !ctx.credentials) return NotFound();
  const auto& s = target.segments;
  const bool read = request.method == Method::kGet || request.method == Method::kHead;
  if (s[0] == ".well-known") {
    if (!read) return NotFound();
    if (s.size() == 4 && s[1] == "oauth-protected-resource" && s[2] == "mcp") return ProtectedResourceMetadata(*ctx.app);
    if (s.size() == 4 && (s[1] == "oauth-authorization-server" || s[1] == "openid-configuration") && s[2] == "oauth")
      return AuthorizationServerMetadata(*ctx.app);
    return NotFound();
  }
  if (s.size() != 3) return NotFound();
  const std::string& endpoint = s[2];
  if (endpoint == "authorize") return Authorize(request, target, ctx);
  if (request.method != Method::kPost) return NotFound();
  if (endpoint == "register") return RegisterClient(request, *ctx.credentials);
  if (endpoint == "token") return Token(request, ctx);
  if (endpoint == "revoke") return Revoke(request, ctx);
  return NotFound();
}

}  // namespace crmd::api
