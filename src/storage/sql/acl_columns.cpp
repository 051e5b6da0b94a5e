#include "storage/sql/acl_columns.hpp"

#include "util/json.hpp"

namespace crmd::storage::sql {

std::optional<std::vector<std::string>> Grantees(const std::optional<std::string>& acl, const char* right) {
  if (!acl) return std::nullopt;
  std::vector<std::string> out;
  auto parsed = ParseJson(*acl);
  if (!parsed.ok() || !parsed.value().is_object()) return out;
  for (const auto& kv : parsed.value().get_object()) {
    const auto* grant = kv.value().is_object() ? kv.value().get_object().if_contains(right) : nullptr;
    if (grant && grant->is_bool() && grant->get_bool()) out.emplace_back(kv.key());
  }
  return out;
}

}  // namespace crmd::storage::sql
