// crmd's OAuth 2.1 authorization server for MCP sign-in (spec §5.6, issue 21; docs/MCP.md): one
// per application, issuer `<public-url>/oauth/<appId>`, one scope (`mcp`), for the one resource
// `<public-url>/mcp/<appId>`. No HTTP here (api/oauth.cpp speaks it).
//
// - Clients register dynamically (RFC 7591). A client id is its registration itself, signed with
//   the application's OAuth secret (registry): nothing is stored per client, so registrations
//   cost no storage and cannot be flooded. A confidential client's secret is derived the same way.
// - The authorization code flow needs PKCE S256. Between the sign-in and the consent, a signed
//   ticket carries the request and the signed-in user.
// - Codes (10 min, single use), access tokens (1 h) and refresh tokens (30 days, rotated at each
//   use) are `_Session` rows of their user, keyed by the SHA-256 of the token like sessions
//   (`createdWith.action` is `oauth`). So they end as sessions do: with the user's deactivation,
//   a password change, or the user's deletion. Rotating the OAuth secret (`crmd app oauth-rotate`)
//   ends them too: every row carries the secret's generation.
// - A code used twice, or a rotated refresh token used again, revokes its whole grant.
//
// Tokens never work as `X-Core-Session-Token` (they lack the `r:` of sessions), and sessions never
// as bearer tokens. Thread-safe.
//
// Here are the decisions; the rows are written by write/oauth_grants, which reads a token's row
// inside its write and asks JudgeSpend, DecideTicket or RevokesFamily what to write.
#pragma once

#include <boost/json.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "auth/context.hpp"
#include "auth/identity.hpp"
#include "auth/registry.hpp"
#include "schema/class_schema.hpp"
#include "storage/row.hpp"
#include "util/result.hpp"

namespace crmd::app {
class Application;
}

namespace crmd::auth::oauth {

inline constexpr std::string_view kScope = "mcp";
inline constexpr std::chrono::seconds kAccessTtl{3600};
inline constexpr std::chrono::seconds kRefreshTtl{30L * 24 * 3600};
inline constexpr std::chrono::seconds kCodeTtl{600};
inline constexpr std::chrono::seconds kTicketTtl{600};

// An OAuth error answer: `error` is the RFC's code (`invalid_grant`, ...).
struct Error {
  int status = 400;
  std::string error;
  std::string description;
};

struct Client {
  std::string id;
  std::vector<std::string> redirect_uris;
  std::string name;
  std::string auth_method;  // none, client_secret_post or client_secret_basic
};

// RFC 7591: the registration answer (201) for `metadata`, or why it is refused.
std::variant<boost::json::object, Error> Register(const AppCredentials& app, const boost::json::object& metadata);
// The client `client_id` names, when crmd signed it for `app` with its current secret.
std::optional<Client> FindClient(const AppCredentials& app, std::string_view client_id);
// Whether `secret` is `client`'s (confidential clients); constant time.
bool ClientSecretMatches(const AppCredentials& app, const Client& client, std::string_view secret);
// Exact match, except that a loopback redirect may use any port (RFC 8252 §7.3).
bool RedirectAllowed(const Client& client, std::string_view redirect_uri);

// A checked authorization request.
struct Authorization {
  std::string client_id;
  std::string redirect_uri;
  std::string challenge;  // PKCE S256
  std::string state;
  std::string resource;
};

// The consent step's ticket: `request`, the user who signed in and a random nonce, signed, valid
// kTicketTtl. It decides once (Decide).
struct Ticket {
  Authorization request;
  std::string user_id;
  std::string nonce;
  std::int64_t expires = 0;  // seconds since the epoch
};
std::string SignTicket(const AppCredentials& app, const Authorization& request, std::string_view user_id);
// nullopt when it is not crmd's for `app`, or expired.
std::optional<Ticket> ReadTicket(const AppCredentials& app, std::string_view ticket);

struct Tokens {
  std::string access_token;
  std::string refresh_token;
  std::int64_t expires_in = 0;
};
boost::json::object TokenAnswer(const Tokens& tokens);

// What an OAuth `_Session` row holds in `createdWith`, beside its user and expiry.
struct Grant {
  std::string kind;    // ticket (a spent one), code, access, refresh
  std::string client;
  std::string family;  // the authorization every token of it came from
  std::string resource;
  std::string generation;    // of the OAuth secret the grant was made under
  std::string redirect_uri;  // code
  std::string challenge;     // code
  bool used = false;         // code, refresh: spent
};
boost::json::object GrantObject(const Grant& grant);
// The grant of a `_Session` row; nullopt for a session's row (not OAuth's).
std::optional<Grant> GrantOf(const schema::ClassSchema& sessions, const storage::Row& row);

// A grant row to write: `grant` for `user_id`, found by `token_hash`, until `expires_ms`. `token`
// is what the client is shown, once (empty for a spent ticket's row).
struct GrantRow {
  std::string user_id;
  Grant grant;
  std::string token;
  std::string token_hash;
  std::int64_t expires_ms = 0;
};

// The consent's decision on `ticket`, taken once (issue 31 #16): the row that spends the ticket
// (keyed by its nonce, living as long as the ticket) and, when `allow`, the code's. Of two posts
// of one ticket, together or not, the one whose write finds the spent row already there gets
// AlreadyDecided() and writes nothing.
struct TicketDecision {
  GrantRow spent;
  std::optional<GrantRow> code;
};
TicketDecision DecideTicket(const AppCredentials& app, const Ticket& ticket, bool allow);
Error AlreadyDecided();

// A single-use token (a code or a refresh token) a client spends for new tokens: found by
// `token_hash`, it must be a `kind` grant, and `check` refuses what else must match.
struct SpendRequest {
  std::string token_hash;
  std::string kind;  // code, refresh
  std::string what;  // what the answers call it
  std::function<std::optional<Error>(const Grant&)> check;
};
// grant_type=authorization_code: the redirect, the resource and PKCE must match the code's.
SpendRequest CodeExchange(std::string_view code, std::string_view verifier, std::string_view redirect_uri,
                          std::string_view resource);
// grant_type=refresh_token.
SpendRequest RefreshExchange(std::string_view refresh_token, std::string_view resource);

// Decided on the token's row as the spending write reads it (null: no row has the hash):
// - Error: refused; nothing to write;
// - RevokeFamily: the token was used before (RFC 9700 §4.2.4, §4.14.2): every row of its family
//   goes, and the refusal is answered after that commits;
// - Rotation: the row's grant becomes `spent` (marked used) and the access and refresh rows are
//   written; `tokens` is the answer.
struct RevokeFamily {
  std::string user_id;
  std::string family;
  Error refusal;
};
struct Rotation {
  Grant spent;
  GrantRow access;
  GrantRow refresh;
  Tokens tokens;
};
using SpendDecision = std::variant<Error, RevokeFamily, Rotation>;
SpendDecision JudgeSpend(const AppCredentials& app, const Client& client, const SpendRequest& request,
                         const schema::ClassSchema& sessions, const storage::Row* row);

// RFC 7009: only access and refresh tokens are revoked; anything else is ignored, as unknown.
bool Revocable(std::string_view token);
// Revoking a refresh token ends its whole grant; an access token ends alone.
bool RevokesFamily(const Grant& grant);

// The caller an access token stands for: its user (roles included) and the user's MCP switches
// (`_User.mcpPermissions`), when the token is valid for `resource`.
struct Bearer {
  Identity identity;
  std::vector<std::string> switches;
};
std::optional<Bearer> ResolveAccessToken(app::Application& app, const AppCredentials& credentials, std::string_view token,
                                         std::string_view resource);

// The MCP switches of a user row's `mcpPermissions` text (a JSON array of names); unknown names
// are dropped.
std::vector<std::string> SwitchesOf(std::string_view stored);

}  // namespace crmd::auth::oauth
