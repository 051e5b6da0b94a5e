// Record ACLs (spec §2.1): `{"<principal>": {"read": bool, "write": bool}}` where a principal is
// `*`, `role:<Name>` or a user objectId.
#pragma once

#include <boost/json.hpp>
#include <string>

#include "util/result.hpp"

namespace crmd::auth {

// Validates an ACL from a request body and returns its stored JSON text (only true/false
// `read`/`write` members kept). 123 `Invalid ACL.` for anything else.
Result<std::string> NormalizeAcl(const boost::json::value& acl);

}  // namespace crmd::auth
