// Record ACLs (spec §2.1): `{"<principal>": {"read": bool, "write": bool}}` where a principal is
// `*`, `role:<Name>` or a user objectId.
#pragma once

#include <boost/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "auth/identity.hpp"
#include "util/result.hpp"

namespace crmd::auth {

// Validates an ACL from a request body and returns its stored JSON text (only true/false
// `read`/`write` members kept). 123 `Invalid ACL.` for anything else.
Result<std::string> NormalizeAcl(const boost::json::value& acl);

// Whether a stored ACL (JSON text; nullopt = public) grants `write` (else read) to any of
// `principals`. A malformed stored ACL grants nothing.
bool AclGrants(const std::optional<std::string>& acl, const std::vector<std::string>& principals, bool write);

enum class AclRight { kRead, kWrite };
// Whether `identity` may `right` a record whose stored ACL is `acl`: the Master identity always
// (Identity::SkipsAcl), anyone else when the ACL names one of their principals or is public.
bool AclAllows(const Identity& identity, const std::optional<std::string>& acl, AclRight right);

}  // namespace crmd::auth
