#include "auth/acl.hpp"

#include "schema/names.hpp"
#include "util/errors.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"

namespace crmd::auth {

namespace {
// User ids are at most this long (master-supplied ids included); see write/.
constexpr std::size_t kMaxPrincipalIdLength = 64;

bool IsPrincipal(std::string_view key) {
  if (key == "*") return true;
  if (key.starts_with("role:")) {
    auto name = key.substr(5);
    return !name.empty() && name.size() <= schema::kMaxNameLength &&
           name.find_first_of("\"\\\0", 0, 3) == std::string_view::npos;
  }
  return ids::IsAlnumId(key, kMaxPrincipalIdLength);
}
}  // namespace

Result<std::string> NormalizeAcl(const boost::json::value& acl) {
  if (!acl.is_object()) return errors::InvalidAcl();
  boost::json::object out;
  for (const auto& kv : acl.get_object()) {
    if (!IsPrincipal(kv.key()) || !kv.value().is_object()) return errors::InvalidAcl();
    boost::json::object grant;
    for (const auto& g : kv.value().get_object()) {
      if ((g.key() != "read" && g.key() != "write") || !g.value().is_bool()) return errors::InvalidAcl();
      grant[g.key()] = g.value();
    }
    out[kv.key()] = std::move(grant);
  }
  return ToJson(out);
}

bool AclGrants(const std::optional<std::string>& acl, const std::vector<std::string>& principals, bool write) {
  if (!acl) return true;
  auto parsed = ParseJson(*acl);
  if (!parsed.ok() || !parsed.value().is_object()) return false;
  const auto& map = parsed.value().get_object();
  for (const auto& p : principals) {
    const auto* entry = map.if_contains(p);
    if (!entry || !entry->is_object()) continue;
    const auto* grant = entry->get_object().if_contains(write ? "write" : "read");
    if (grant && grant->is_bool() && grant->get_bool()) return true;
  }
  return false;
}

bool AclAllows(const Identity& identity, const std::optional<std::string>& acl, AclRight right) {
  return identity.SkipsAcl() || AclGrants(acl, identity.Principals(), right == AclRight::kWrite);
}

}  // namespace crmd::auth
