// Who is making a request, decided once per request from its credential headers (spec §5.2).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/registry.hpp"

namespace crmd::auth {

enum class Principal {
  kMaster,     // the master key
  kApiKey,     // a named API key: master identity (spec §5.2), revocable
  kUser,       // a session token (users and sessions arrive with the permissions issue)
  kAnonymous,  // the application id alone
  kRejected,   // a credential header that matched nothing: every operation answers 119
  kSystem,     // crmd's own writes (product base, functions, triggers): master rights, named
               // `Master` in the change history (spec §2.6)
};

struct Identity {
  Principal principal = Principal::kAnonymous;
  std::string key_name;            // kApiKey: which key, for logs
  std::string user_id;             // kUser
  std::vector<std::string> roles;  // kUser: role names, inherited ones included
  std::string session_id;          // kUser: the _Session row of the token
  // The request's installation id, where the application's `installations` gate lets it name
  // an ACL principal (`installation:<id>`): set by the router, never for the Master identity.
  std::string installation_id;
  // The application's gates (auth/gates.hpp), which Authorize applies: set with the credential
  // (ResolveKeys, and by the router for a session or a bearer token).
  Gates gates;

  bool IsMaster() const {
    return principal == Principal::kMaster || principal == Principal::kApiKey || principal == Principal::kSystem;
  }
  // Whether record ACLs bind this identity: the Master identity (spec §5.2: keys and crmd's own
  // writes) reads and writes every record; everyone else only what an ACL grants. The one place
  // that says so; auth::AclAllows and query/visibility ask it.
  bool SkipsAcl() const { return IsMaster(); }
  // The identity crmd writes as on its own behalf.
  static Identity System() {
    Identity id;
    id.principal = Principal::kSystem;
    return id;
  }
  // Who an ACL or CLP entry may name for this caller: `*`, the user's id, `role:<name>` per role,
  // `installation:<id>` for an installation id (above).
  std::vector<std::string> Principals() const;
};

// The longest installation id taken: the SDK sends a 36-character UUID.
inline constexpr std::size_t kMaxInstallationIdLength = 128;
// Whether `id` may name an installation in an ACL: 1-128 letters, digits and `-`, so
// `installation:<id>` never reads as a user id, a role or `*`.
bool IsInstallationId(std::string_view id);

// A key counts only under its own header: a master key sent as an API key is rejected.
Identity ResolveKeys(const AppCredentials& app, std::optional<std::string_view> master_key,
                     std::optional<std::string_view> api_key);

}  // namespace crmd::auth
