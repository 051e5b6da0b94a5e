#include "auth/oauth.hpp"

#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <functional>

#include "app/application.hpp"
#include "app/write_unit.hpp"
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

// What an OAuth `_Session` row holds beside its user and expiry.
struct Grant {
  std::string kind;    // code, access, refresh
  std::string client;
  std::string family;  // the authorization every token of it came from
  std::string resource;
  std::string generation;
  std::string redirect_uri;  // code
  std::string challenge;     // code
  bool used = false;         // code, refresh: spent
};

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

std::string UserOf(const schema::ClassSchema& cls, const storage::Row& row) { return storage::TextOf(cls, row, "user"); }

bool Expired(const schema::ClassSchema& cls, const storage::Row& row) {
  const std::string expires = storage::TextOf(cls, row, "expiresAt");
  return expires.empty() || expires <= timeutil::NowIso();
}

// Writes a row of `grant` for `user_id`, found by `token_hash`, until `expires_ms`.
void InsertGrantRow(storage::WriteTransaction& txn, const schema::ClassSchema& cls, const std::string& user_id,
                    const Grant& grant, const std::string& token_hash, std::int64_t expires_ms) {
  storage::Row row;
  row.created_at = row.updated_at = timeutil::NowIso();
  row.acl = ToJson(json::object{{user_id, json::object{{"read", true}, {"write", true}}}});
  const std::vector<std::string> columns{"user", "expiresAt", "createdWith", schema::kSessionTokenHash};
  row.cells = {user_id, timeutil::FormatIso(expires_ms), ToJson(GrantObject(grant)), token_hash};
  storage::InsertWithNewId(txn, cls, columns, row, [](storage::Row&) {});
}

// Writes a row of `grant` for `user_id` valid `ttl`; returns its token.
std::string AddGrantRow(storage::WriteTransaction& txn, const schema::ClassSchema& cls, const std::string& user_id,
                        const Grant& grant, std::string_view prefix, std::chrono::seconds ttl) {
  const std::string token = NewToken(prefix);
  InsertGrantRow(txn, cls, user_id, grant, ids::HashSecret(token),
                 timeutil::NowMillis() + std::chrono::duration_cast<std::chrono::milliseconds>(ttl).count());
  return token;
}

void SetGrant(storage::WriteTransaction& txn, const schema::ClassSchema& cls, storage::Row row, const Grant& grant) {
  row.updated_at = timeutil::NowIso();
  const std::vector<std::string> columns{"createdWith"};
  row.cells = {ToJson(GrantObject(grant))};
  txn.Update(cls, columns, row);
}

// Every row of `family`: a revoked grant.
void DeleteFamily(storage::WriteTransaction& txn, const schema::ClassSchema& cls, const std::string& user_id,
                  const std::string& family) {
  schema::Query q;
  q.where = schema::FieldEquals("user", user_id);
  q.limit = -1;
  std::vector<std::string> ids;
  txn.Find(cls, q, [&](const storage::Row& row) {
    if (auto g = GrantOf(cls, row); g && g->family == family) ids.push_back(row.object_id);
    return true;
  });
  for (const auto& id : ids) txn.Delete(cls, id);
}

Tokens IssueTokens(storage::WriteTransaction& txn, const schema::ClassSchema& cls, const std::string& user_id,
                   const Grant& from) {
  Grant access = from;
  access.kind = "access";
  access.redirect_uri.clear();
  access.challenge.clear();
  access.used = false;
  Grant refresh = access;
  refresh.kind = "refresh";
  Tokens tokens;
  tokens.access_token = AddGrantRow(txn, cls, user_id, access, kAccessPrefix, kAccessTtl);
  tokens.refresh_token = AddGrantRow(txn, cls, user_id, refresh, kRefreshPrefix, kRefreshTtl);
  tokens.expires_in = kAccessTtl.count();
  return tokens;
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

std::variant<std::optional<std::string>, Error> Decide(Context& ctx, const Ticket& ticket, bool allow) {
  const AppCredentials& app = *ctx.credentials;
  using Outcome = std::variant<std::optional<std::string>, Error>;
  // The application's writes take turns (app::RunWrite), across servers too: the second post of a
  // ticket reads the first one's row.
  auto outcome = app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Result<Outcome> {
    auto& txn = unit.txn();
    const auto& cls = Sessions(*unit.schema());
    const std::string spent = ids::HashSecret(std::string(kSpentTicketPrefix) + ticket.nonce);
    if (storage::FindFirst(txn, cls, schema::kSessionTokenHash, spent))
      return Outcome(Error{400, "invalid_request", "this sign-in was already decided"});
    const Authorization& request = ticket.request;
    // Its own family: revoking the grant the code starts never forgets that the ticket was spent.
    const Grant marker{"ticket", request.client_id, ids::RandomAlnum(16), request.resource, Generation(app), {}, {}, true};
    InsertGrantRow(txn, cls, ticket.user_id, marker, spent, ticket.expires * 1000);
    if (!allow) return Outcome(std::optional<std::string>());
    const Grant code{"code", request.client_id, ids::RandomAlnum(16), request.resource, Generation(app),
                     request.redirect_uri, request.challenge, false};
    return Outcome(std::optional<std::string>(AddGrantRow(txn, cls, ticket.user_id, code, kCodePrefix, kCodeTtl)));
  });
  if (!outcome.ok()) return Error{500, "server_error", outcome.error().message};
  return std::move(outcome).value();
}

json::object TokenAnswer(const Tokens& tokens) {
  return json::object{{"access_token", tokens.access_token}, {"token_type", "Bearer"}, {"expires_in", tokens.expires_in},
                      {"refresh_token", tokens.refresh_token}, {"scope", kScope}};
}

namespace {

// Spends the single-use row of `token`, a `kind` (code or refresh) grant for `client`: one that is
// unknown, expired or of an older secret is invalid_grant; one used before revokes its whole grant
// (RFC 9700 §4.2.4, §4.14.2); `check` refuses what else must match. Otherwise it is marked used
// and a new access and refresh token are issued, in one write.
std::variant<Tokens, Error> Spend(Context& ctx, const Client& client, std::string_view token, std::string_view kind,
                                  std::string_view what, const std::function<std::optional<Error>(const Grant&)>& check) {
  const AppCredentials& app = *ctx.credentials;
  auto outcome = app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Result<std::variant<Tokens, Error>> {
    auto& txn = unit.txn();
    const auto& cls = Sessions(*unit.schema());
    auto row = storage::FindFirst(txn, cls, schema::kSessionTokenHash, ids::HashSecret(token));
    auto grant = row ? GrantOf(cls, *row) : std::nullopt;
    if (!row || !grant || grant->kind != kind || grant->generation != Generation(app) || Expired(cls, *row))
      return std::variant<Tokens, Error>(InvalidGrant("the " + std::string(what) + " is unknown, expired or revoked"));
    const std::string user_id = UserOf(cls, *row);
    // Committed with the refusal: the answer is a value, not an error that rolls the unit back.
    if (grant->used) {
      DeleteFamily(txn, cls, user_id, grant->family);
      return std::variant<Tokens, Error>(InvalidGrant("the " + std::string(what) + " was already used; the grant is revoked"));
    }
    if (grant->client != client.id)
      return std::variant<Tokens, Error>(InvalidGrant("the " + std::string(what) + " was issued to another client"));
    if (auto refused = check(*grant)) return std::variant<Tokens, Error>(std::move(*refused));
    grant->used = true;
    SetGrant(txn, cls, *row, *grant);
    return std::variant<Tokens, Error>(IssueTokens(txn, cls, user_id, *grant));
  });
  if (!outcome.ok()) return Error{500, "server_error", outcome.error().message};
  return std::move(outcome).value();
}

}  // namespace

std::variant<Tokens, Error> ExchangeCode(Context& ctx, const Client& client, std::string_view code,
                                         std::string_view verifier, std::string_view redirect_uri, std::string_view resource) {
  return Spend(ctx, client, code, "code", "code", [&](const Grant& grant) -> std::optional<Error> {
    if (grant.redirect_uri != redirect_uri) return InvalidGrant("redirect_uri does not match the authorization request");
    if (!resource.empty() && resource != grant.resource)
      return Error{400, "invalid_target", "resource does not match the authorization request"};
    if (!VerifierMatches(verifier, grant.challenge)) return InvalidGrant("code_verifier does not match the code_challenge");
    return std::nullopt;
  });
}

std::variant<Tokens, Error> Refresh(Context& ctx, const Client& client, std::string_view refresh_token, std::string_view resource) {
  return Spend(ctx, client, refresh_token, "refresh", "refresh token", [&](const Grant& grant) -> std::optional<Error> {
    if (!resource.empty() && resource != grant.resource) return Error{400, "invalid_target", "resource does not match the grant"};
    return std::nullopt;
  });
}

void Revoke(Context& ctx, std::string_view token) {
  if (!token.starts_with(kAccessPrefix) && !token.starts_with(kRefreshPrefix)) return;
  (void)app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Status {
    auto& txn = unit.txn();
    const auto& cls = Sessions(*unit.schema());
    auto row = storage::FindFirst(txn, cls, schema::kSessionTokenHash, ids::HashSecret(token));
    auto grant = row ? GrantOf(cls, *row) : std::nullopt;
    if (!row || !grant) return Status();
    if (grant->kind == "refresh") DeleteFamily(txn, cls, UserOf(cls, *row), grant->family);
    else txn.Delete(cls, row->object_id);
    return Status();
  });
}

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
