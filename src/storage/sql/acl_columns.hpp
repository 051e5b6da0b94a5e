// The columns every store derives from a record's ACL: who may read it and who may write it, so
// that a query's ACL check reads a list rather than parsing the ACL of each row.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace crmd::storage::sql {

// The principals an ACL (JSON text) grants `right` ("read" or "write"); nullopt when there is no
// ACL (public). An unreadable ACL grants nobody.
std::optional<std::vector<std::string>> Grantees(const std::optional<std::string>& acl, const char* right);

}  // namespace crmd::storage::sql
