#include "auth/oauth.hpp"

#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <functional>

#include "app/application.hpp"
#include "auth/sessions.hpp"
#include "schema/system_classes.hpp"
#include "storage/database.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"
#include "util/time.hpp"

namespace crmd::auth::oauth {

namespace json = boost::json;

namespace {

// Registration limits: a client id carries its registration, so it stays a few hundred bytes.
constexpr std::size_t kMaxRedirects = 8;
constexpr std::size_t kMaxRedirectLength = 512;
constexpr std::size_t kMaxClientName = 128;
constexpr std::string_view kClientPrefix = "mcpc1.";
constexpr std::string_view kTicketPrefix = "mcpt1.";
constexpr std::string_view kAccessPrefix = "mcp_at_";
constexpr std::string_view kRefreshPrefix = "mcp_rt_";
constexpr std::string_view kCodePrefix = "mcp_code_";
// What a spent ticket's row is keyed by (with its nonce): no token of any kind starts so.
constexpr std::string_view kSpentTicketPrefix = "mcp_ticket_";
// A ticket's nonce: 22 characters of [A-Za-z0-9], more than 128 bits.
constexpr std::size_t kTicketNonceLength = 22;
constexpr const char* kSwitches[] = {"mcp:view", "mcp:create", "mcp:update", "mcp:edit-page-and-schema"};

std::string Base64Url(std::string_view bytes) {
  std::string out(sodium_base64_ENCODED_LEN(bytes.size(), sodium_base64_VARIANT_URLSAFE_NO_PADDING), '\0');
  sodium_bin2base64(out.data(), out.size(), reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  out.resize(std::strlen(out.c_str()));
  return out;
}

std::optional<std::string> FromBase64Url(std::string_view text) {
  std::string out(text.size() * 3 / 4 + 3, '\0');
  std::size_t length = 0;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(out.data()), out.size(), text.data(), text.size(), nullptr,
                        &length, nullptr, sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0)
    return std::nullopt;
  out.resize(length);
  return out;
}

std::string Hmac(const AppCredentials& app, std::string_view purpose, std::string_view message) {
  unsigned char key[crypto_auth_hmacsha256_KEYBYTES];
  crypto_hash_sha256(key, reinterpret_cast<const unsigned char*>(app.oauth_secret.data()), app.oauth_secret.size());
  crypto_auth_hmacsha256_state state;
  crypto_auth_hmacsha256_init(&state, key, sizeof key);
  crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>(purpose.data()), purpose.size());
  crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>("\n"), 1);
  crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>(message.data()), message.size());
  unsigned char mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256_final(&state, mac);
  sodium_memzero(key, sizeof key);
  return Base64Url(std::string_view(reinterpret_cast<const char*>(mac), sizeof mac));
}

bool SameText(std::string_view a, std::string_view b) {
  return a.size() == b.size() && sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

// `<prefix><payload>.<mac>` for `value`, and back.
std::string Sign(const AppCredentials& app, std::string_view prefix, const json::value& value) {
  const std::string payload = Base64Url(ToJson(value));
  return std::string(prefix) + payload + "." + Hmac(app, prefix, payload);
}

std::optional<json::object> Open(const AppCredentials& app, std::string_view prefix, std::string_view signed_text) {
  if (app.oauth_secret.empty() || !signed_text.starts_with(prefix)) return std::nullopt;
  const std::string_view rest = signed_text.substr(prefix.size());
  const auto dot = rest.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::string_view payload = rest.substr(0, dot);
  if (!SameText(Hmac(app, prefix, payload), rest.substr(dot + 1))) return std::nullopt;
  auto text = FromBase64Url(payload);
  if (!text) return std::nullopt;
  auto parsed = ParseJson(*text);
  if (!parsed.ok() || !parsed.value().is_object()) return std::nullopt;
  return std::move(parsed).value().get_object();
}

std::string Text(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// The generation of the application's OAuth secret: rows of an older one are dead.
std::string Generation(const AppCredentials& app) { return Hmac(app, "generation", "").substr(0, 16); }

std::string NewToken(std::string_view prefix) {
  unsigned char bytes[24];
  randombytes_buf(bytes, sizeof bytes);
  char hex[sizeof bytes * 2 + 1];
  sodium_bin2hex(hex, sizeof hex, bytes, sizeof bytes);
  return std::string(prefix) + hex;
}

bool IsLoopbackHost(std::string_view host) { return host == "localhost" || host == "127.0.0.1" || host == "[::1]"; }

struct ParsedUri {
  std::string scheme, host, port, rest;  // rest: path and query
};

std::optional<ParsedUri> ParseUri(std::string_view uri) {
  const auto colon = uri.find("://");
  if (colon == std::string_view::npos) return std::nullopt;
  ParsedUri out;
  out.scheme = std::string(uri.substr(0, colon));
  std::string_view after = uri.substr(colon + 3);
  const auto slash = after.find_first_of("/?");
  std::string_view authority = after.substr(0, slash);
  out.rest = slash == std::string_view::npos ? std::string("/") : std::string(after.substr(slash));
  if (authority.empty() || authority.find('@') != std::string_view::npos) return std::nullopt;
  const auto port = authority.starts_with('[') ? authority.find("]:") : authority.rfind(':');
  if (port != std::string_view::npos) {
    const std::size_t at = authority.starts_with('[') ? port + 1 : port;
    out.host = std::string(authority.substr(0, at));
    out.port = std::string(authority.substr(at + 1));
  } else {
    out.host = std::string(authority);
  }
  return out;
}

// https anywhere, or http on a loopback host; no fragment, no control characters or spaces.
bool IsAcceptableRedirect(std::string_view uri) {
  if (uri.empty() || uri.size() > kMaxRedirectLength || uri.find('#') != std::string_view::npos) return false;
  for (unsigned char c : uri)
    if (c <= 0x20 || c >= 0x7f) return false;
  auto parsed = ParseUri(uri);
  if (!parsed || parsed->host.empty()) return false;
  return parsed->scheme == "https" || (parsed->scheme == "http" && IsLoopbackHost(parsed->host));
}

const schema::ClassSchema& Sessions(const schema::Snapshot& snapshot) { return *snapshot.Find("_Session"); }

std::string UserOf(const schema::ClassSchema& cls, const storage::Row& row) { return storage::TextOf(cls, row, "user"); }

bool Expired(const schema::ClassSchema& cls, const storage::Row& row) {
  const std::string expires = storage::TextOf(cls, row, "expiresAt");
  return expires.empty() || expires <= timeutil::NowIso();
}

// A new token with `prefix`, as a row of `grant` for `user_id` valid `ttl`.
GrantRow NewGrantRow(const std::string& user_id, Grant grant, std::string_view prefix, std::chrono::seconds ttl) {
  GrantRow row{user_id, std::move(grant), NewToken(prefix), {},
               timeutil::NowMillis() + std::chrono::duration_cast<std::chrono::milliseconds>(ttl).count()};
  row.token_hash = ids::HashSecret(row.token);
  return row;
}

// PKCE (RFC 7636): 43 to 128 unreserved characters whose SHA-256, base64url, is the challenge.
bool VerifierMatches(std::string_view verifier, std::string_view challenge) {
  if (verifier.size() < 43 || verifier.size() > 128) return false;
  for (char c : verifier)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '_' && c != '~') return false;
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(verifier.data()), verifier.size());
  return SameText(Base64Url(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest)), challenge);
}

Error InvalidGrant(std::string description) { return Error{400, "invalid_grant", std::move(description)}; }

}  // namespace

json::object GrantObject(const Grant& g) {
  json::object o{{"action", "oauth"}, {"authProvider", "mcp"}, {"kind", g.kind},     {"client", g.client},
                 {"family", g.family}, {"resource", g.resource}, {"scope", kScope}, {"generation", g.generation}};
  if (!g.redirect_uri.empty()) o["redirect_uri"] = g.redirect_uri;
  if (!g.challenge.empty()) o["challenge"] = g.challenge;
  if (g.kind != "access") o["used"] = g.used;
  return o;
}

std::optional<Grant> GrantOf(const schema::ClassSchema& cls, const storage::Row& row) {
  auto parsed = ParseJson(storage::TextOf(cls, row, "createdWith"));
  if (!parsed.ok() || !parsed.value().is_object()) return std::nullopt;
  const auto& o = parsed.value().get_object();
  if (Text(o, "action") != "oauth") return std::nullopt;
  Grant g{Text(o, "kind"), Text(o, "client"), Text(o, "family"), Text(o, "resource"), Text(o, "generation"),
          Text(o, "redirect_uri"), Text(o, "challenge"), false};
  if (const auto* used = o.if_contains("used"); used && used->is_bool()) g.used = used->get_bool();
  return g;
}

std::variant<json::object, Error> Register(const AppCredentials& app, const json::object& metadata) {
  const auto* uris = metadata.if_contains("redirect_uris");
  if (!uris || !uris->is_array() || uris->get_array().empty() || uris->get_array().size() > kMaxRedirects)
    return Error{400, "invalid_redirect_uri", "redirect_uris must list 1 to 8 addresses"};
  json::array redirects;
  for (const auto& uri : uris->get_array()) {
    if (!uri.is_string() || !IsAcceptableRedirect(uri.get_string()))
      return Error{400, "invalid_redirect_uri", "a redirect URI must be https, or http on a loopback host, without a fragment"};
    redirects.push_back(uri);
  }
  std::string method = "client_secret_basic";  // RFC 7591's default
  if (const auto* m = metadata.if_contains("token_endpoint_auth_method")) {
    if (!m->is_string() || (m->get_string() != "none" && m->get_string() != "client_secret_post" && m->get_string() != "client_secret_basic"))
      return Error{400, "invalid_client_metadata", "token_endpoint_auth_method must be none, client_secret_post or client_secret_basic"};
    method = std::string(m->get_string());
  }
  if (const auto* grants = metadata.if_contains("grant_types"); grants && grants->is_array())
    for (const auto& g : grants->get_array())
      if (!g.is_string() || (g.get_string() != "authorization_code" && g.get_string() != "refresh_token"))
        return Error{400, "invalid_client_metadata", "grant_types may hold authorization_code and refresh_token only"};
  std::string name = Text(metadata, "client_name");
  if (name.size() > kMaxClientName) return Error{400, "invalid_client_metadata", "client_name is too long"};
  const std::int64_t issued = timeutil::NowMillis() / 1000;
  const std::string id = Sign(app, kClientPrefix, json::object{{"r", redirects}, {"n", name}, {"m", method}, {"t", issued}});
  json::object answer{{"client_id", id},
                      {"client_id_issued_at", issued},
                      {"redirect_uris", redirects},
                      {"grant_types", json::array{"authorization_code", "refresh_token"}},
                      {"response_types", json::array{"code"}},
                      {"token_endpoint_auth_method", method},
                      {"scope", kScope}};
  if (!name.empty()) answer["client_name"] = name;
  if (method != "none") {
    answer["client_secret"] = Hmac(app, "client-secret", id);
    answer["client_secret_expires_at"] = 0;
  }
  return answer;
}

std::optional<Client> FindClient(const AppCredentials& app, std::string_view client_id) {
  auto opened = Open(app, kClientPrefix, client_id);
  if (!opened) return std::nullopt;
  Client client;
  client.id = std::string(client_id);
  client.name = Text(*opened, "n");
  client.auth_method = Text(*opened, "m");
  if (const auto* r = opened->if_contains("r"); r && r->is_array())
    for (const auto& uri : r->get_array())
      if (uri.is_string()) client.redirect_uris.emplace_back(uri.get_string());
  return client;
}

bool ClientSecretMatches(const AppCredentials& app, const Client& client, std::string_view secret) {
  return !secret.empty() && SameText(Hmac(app, "client-secret", client.id), secret);
}

bool RedirectAllowed(const Client& client, std::string_view redirect_uri) {
  for (const auto& registered : client.redirect_uris) {
    if (registered == redirect_uri) return true;
    auto a = ParseUri(registered);
    auto b = ParseUri(redirect_uri);
    if (a && b && a->scheme == "http" && IsLoopbackHost(a->host) && a->scheme == b->scheme && a->host == b->host &&
        a->rest == b->rest)
      return true;
  }
  return false;
}

std::string SignTicket(const AppCredentials& app, const Authorization& request, std::string_view user_id) {
  const std::int64_t expires = timeutil::NowMillis() / 1000 + kTicketTtl.count();
  return Sign(app, kTicketPrefix,
              json::object{{"c", request.client_id}, {"r", request.redirect_uri}, {"ch", request.challenge},
                           {"s", request.state}, {"res", request.resource}, {"u", user_id}, {"e", expires},
                           {"n", ids::RandomAlnum(kTicketNonceLength)}});
}

std::optional<Ticket> ReadTicket(const AppCredentials& app, std::string_view ticket) {
  auto opened = Open(app, kTicketPrefix, ticket);
  if (!opened) return std::nullopt;
  const auto* expires = opened->if_contains("e");
  if (!expires || !expires->is_int64() || expires->get_int64() < timeutil::NowMillis() / 1000) return std::nullopt;
  // A ticket without its nonce could not be spent: not one of these.
  const std::string nonce = Text(*opened, "n");
  if (nonce.size() != kTicketNonceLength) return std::nullopt;
  Authorization request{Text(*opened, "c"), Text(*opened, "r"), Text(*opened, "ch"), Text(*opened, "s"), Text(*opened, "res")};
  return Ticket{std::move(request), Text(*opened, "u"), nonce, expires->get_int64()};
}

TicketDecision DecideTicket(const AppCredentials& app, const Ticket& ticket, bool allow) {
  const Authorization& request = ticket.request;
  TicketDecision decision;
  // Its own family: revoking the grant the code starts never forgets that the ticket was spent.
  decision.spent.user_id = ticket.user_id;
  decision.spent.grant = Grant{"ticket", request.client_id, ids::RandomAlnum(16), request.resource, Generation(app), {}, {}, true};
  decision.spent.token_hash = ids::HashSecret(std::string(kSpentTicketPrefix) + ticket.nonce);
  decision.spent.expires_ms = ticket.expires * 1000;
  if (allow)
    decision.code = NewGrantRow(ticket.user_id,
                                Grant{"code", request.client_id, ids::RandomAlnum(16), request.resource, Generation(app),
                                      request.redirect_uri, request.challenge, false},
                                kCodePrefix, kCodeTtl);
  return decision;
}

Error AlreadyDecided() { return Error{400, "invalid_request", "this sign-in was already decided"}; }

json::object TokenAnswer(const Tokens& tokens) {
  return json::object{{"access_token", tokens.access_token}, {"token_type", "Bearer"}, {"expires_in", tokens.expires_in},
                      {"refresh_token", tokens.refresh_token}, {"scope", kScope}};
}

SpendRequest CodeExchange(std::string_view code, std::string_view verifier, std::string_view redirect_uri,
                          std::string_view resource) {
  auto check = [verifier = std::string(verifier), redirect_uri = std::string(redirect_uri),
                resource = std::string(resource)](const Grant& grant) -> std::optional<Error> {
    if (grant.redirect_uri != redirect_uri) return InvalidGrant("redirect_uri does not match the authorization request");
    if (!resource.empty() && resource != grant.resource)
      return Error{400, "invalid_target", "resource does not match the authorization request"};
    if (!VerifierMatches(verifier, grant.challenge)) return InvalidGrant("code_verifier does not match the code_challenge");
    return std::nullopt;
  };
  return SpendRequest{ids::HashSecret(code), "code", "code", std::move(check)};
}

SpendRequest RefreshExchange(std::string_view refresh_token, std::string_view resource) {
  auto check = [resource = std::string(resource)](const Grant& grant) -> std::optional<Error> {
    if (!resource.empty() && resource != grant.resource) return Error{400, "invalid_target", "resource does not match the grant"};
    return std::nullopt;
  };
  return SpendRequest{ids::HashSecret(refresh_token), "refresh", "refresh token", std::move(check)};
}

SpendDecision JudgeSpend(const AppCredentials& app, const Client& client, const SpendRequest& request,
                         const schema::ClassSchema& sessions, const storage::Row* row) {
  auto grant = row ? GrantOf(sessions, *row) : std::nullopt;
  if (!row || !grant || grant->kind != request.kind || grant->generation != Generation(app) || Expired(sessions, *row))
    return InvalidGrant("the " + request.what + " is unknown, expired or revoked");
  const std::string user_id = UserOf(sessions, *row);
  if (grant->used) return RevokeFamily{user_id, grant->family, InvalidGrant("the " + request.what + " was already used; the grant is revoked")};
  if (grant->client != client.id) return InvalidGrant("the " + request.what + " was issued to another client");
  if (request.check)
    if (auto refused = request.check(*grant)) return std::move(*refused);
  Rotation rotation;
  rotation.spent = *grant;
  rotation.spent.used = true;
  Grant access = rotation.spent;
  access.kind = "access";
  access.redirect_uri.clear();
  access.challenge.clear();
  access.used = false;
  Grant refresh = access;
  refresh.kind = "refresh";
  rotation.access = NewGrantRow(user_id, std::move(access), kAccessPrefix, kAccessTtl);
  rotation.refresh = NewGrantRow(user_id, std::move(refresh), kRefreshPrefix, kRefreshTtl);
  rotation.tokens = Tokens{rotation.access.token, rotation.refresh.token, kAccessTtl.count()};
  return rotation;
}

bool Revocable(std::string_view token) { return token.starts_with(kAccessPrefix) || token.starts_with(kRefreshPrefix); }

bool RevokesFamily(const Grant& grant) { return grant.kind == "refresh"; }

std::optional<Bearer> ResolveAccessToken(app::Application& app, const AppCredentials& credentials, std::string_view token,
                                         std::string_view resource) {
  if (!token.starts_with(kAccessPrefix)) return std::nullopt;
  auto snapshot = app.schema();
  const auto& cls = Sessions(*snapshot);
  auto row = storage::FindFirst(app.db(), cls, schema::kSessionTokenHash, ids::HashSecret(token));
  auto grant = row ? GrantOf(cls, *row) : std::nullopt;
  if (!row || !grant || grant->kind != "access" || grant->resource != resource ||
      grant->generation != Generation(credentials) || Expired(cls, *row))
    return std::nullopt;
  const std::string user_id = UserOf(cls, *row);
  const auto& users = *snapshot->Find("_User");
  auto user = user_id.empty() ? std::nullopt : app.db().Get(users, user_id);
  if (!user) return std::nullopt;
  const storage::Cell active = storage::CellOf(users, *user, "active");
  if (const auto* flag = std::get_if<std::int64_t>(&active); flag && *flag == 0) return std::nullopt;
  Bearer bearer;
  bearer.identity.principal = Principal::kUser;
  bearer.identity.user_id = user_id;
  bearer.identity.session_id = row->object_id;
  bearer.identity.roles = RolesOf(app, user_id);
  bearer.switches = SwitchesOf(storage::TextOf(users, *user, "mcpPermissions"));
  return bearer;
}

std::vector<std::string> SwitchesOf(std::string_view stored) {
  std::vector<std::string> out;
  auto parsed = ParseJson(stored);
  if (!parsed.ok() || !parsed.value().is_array()) return out;
  for (const auto& v : parsed.value().get_array())
    if (v.is_string() && std::find(std::begin(kSwitches), std::end(kSwitches), v.get_string()) != std::end(kSwitches))
      out.emplace_back(v.get_string());
  return out;
}

}  // namespace crmd::auth::oauth
