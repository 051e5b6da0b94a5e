// auth::Authorize: the one door every read and write of records passes (STYLE.md habit 7).
// Record-level ACL constraints are added to queries by the permissions issue; the hook is here.
#pragma once

#include <string_view>

#include "auth/identity.hpp"
#include "schema/class_schema.hpp"
#include "util/result.hpp"

namespace crmd::auth {

enum class Operation { kFind, kCount, kGet, kCreate, kUpdate, kDelete, kAddField };

// The name used in CLPs and in `Permission denied for action <op> on class <X>.`
std::string_view OperationName(Operation op);

// Whether `identity` may perform `op` on `class_name`. `cls` is null for a class that does not
// exist yet (reads then find nothing; a keyed write creates it).
Status Authorize(const Identity& identity, Operation op, std::string_view class_name,
                 const schema::ClassSchema* cls);

}  // namespace crmd::auth
