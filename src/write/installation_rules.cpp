#include "write/installation_rules.hpp"

#include "util/errors.hpp"
#include "util/json.hpp"

namespace crmd::write {

namespace json = boost::json;

bool IsInstallationWrite(const auth::Identity& identity, std::string_view class_name) {
  return class_name == "_Installation" && !identity.IsMaster() && !identity.installation_id.empty();
}

Status CheckInstallationWrite(const auth::Identity& identity, const json::object& body, WriteKind kind) {
  const char* op = kind == WriteKind::kCreate ? "create" : "update";
  if (body.contains("ACL")) return errors::PermissionDenied(op, "_Installation");
  const auto* id = body.if_contains("installationId");
  const bool own = id && id->is_string() && id->get_string() == identity.installation_id;
  if (kind == WriteKind::kCreate && !own) return errors::PermissionDenied(op, "_Installation");
  if (kind == WriteKind::kUpdate && id && !own)
    return ApiError{400, 136, "installationId may not be changed in this operation"};
  return {};
}

std::string InstallationAcl(std::string_view installation_id) {
  return ToJson(json::object{{"installation:" + std::string(installation_id), json::object{{"read", true}, {"write", true}}}});
}

}  // namespace crmd::write
