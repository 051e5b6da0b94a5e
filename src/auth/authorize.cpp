#include "auth/authorize.hpp"

#include "util/errors.hpp"

namespace crmd::auth {

std::string_view OperationName(Operation op) {
  switch (op) {
    case Operation::kFind: return "find";
    case Operation::kCount: return "count";
    case Operation::kGet: return "get";
    case Operation::kCreate: return "create";
    case Operation::kUpdate: return "update";
    case Operation::kDelete: return "delete";
    case Operation::kAddField: return "addField";
  }
  return "find";
}

namespace {

bool IsWrite(Operation op) {
  switch (op) {
    case Operation::kCreate:
    case Operation::kUpdate:
    case Operation::kDelete:
    case Operation::kAddField: return true;
    case Operation::kFind:
    case Operation::kCount:
    case Operation::kGet: return false;
  }
  return true;
}

// True when the class-level permission for `op` grants the public (`*`).
bool PublicMayDo(const schema::ClassSchema& cls, Operation op) {
  const auto* rule = cls.class_level_permissions.if_contains(OperationName(op));
  if (!rule || !rule->is_object()) return false;
  const auto* star = rule->get_object().if_contains("*");
  return star && star->is_bool() && star->get_bool();
}

}  // namespace

Status Authorize(const Identity& identity, Operation op, std::string_view class_name,
                 const schema::ClassSchema* cls) {
  switch (identity.principal) {
    case Principal::kMaster:
    case Principal::kApiKey: return {};
    case Principal::kRejected: return errors::PermissionDenied(OperationName(op), class_name);
    case Principal::kAnonymous:
      // Spec §4.1: the CAPTCHA gate runs before any permission check, even on open classes.
      if (IsWrite(op)) return errors::CaptchaRequired();
      if (!cls || PublicMayDo(*cls, op)) return {};
      return errors::PermissionDenied(OperationName(op), class_name);
    case Principal::kUser:
      // Sessions arrive with the permissions issue; until then no token resolves to a user.
      return errors::PermissionDenied(OperationName(op), class_name);
  }
  return errors::PermissionDenied(OperationName(op), class_name);
}

}  // namespace crmd::auth
