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

bool Granted(const boost::json::object& rule, std::string_view principal) {
  const auto* v = rule.if_contains(principal);
  return v && v->is_bool() && v->get_bool();
}

}  // namespace

Status Authorize(const Identity& identity, Operation op, std::string_view class_name,
                 const schema::ClassSchema* cls) {
  const std::string_view name = OperationName(op);
  // Spec §5.3: the request log answers the master key alone; an API key, which CLPs cannot tell
  // from the master key, is refused like a session.
  if (class_name == "_RequestLog" && identity.principal != Principal::kMaster && identity.principal != Principal::kSystem)
    return errors::PermissionDenied(name, class_name);
  // An application whose sign-up is open (auth::Gates) lets anyone make a user; the user rules
  // (unique names, the password) still hold.
  if (op == Operation::kCreate && class_name == "_User" && !identity.gates.signup_needs_key &&
      identity.principal != Principal::kRejected)
    return {};
  // Issue 36, gates of the Parse profile: a user updating their own `_User` (write::UpdateRecord
  // has answered 206 for anyone else's, and the record's ACL still decides), and the writes a
  // client may make to `_User` adding fields to it.
  if (class_name == "_User" && op == Operation::kUpdate && identity.gates.self_update &&
      identity.principal == Principal::kUser)
    return {};
  if (class_name == "_User" && op == Operation::kAddField && identity.gates.user_fields &&
      identity.principal != Principal::kRejected)
    return {};
  // An installation makes, reads and changes its own `_Installation` row: the write pipeline
  // checks the row is its own, and its ACL names the installation alone.
  if (class_name == "_Installation" && identity.gates.installations && !identity.installation_id.empty() &&
      (op == Operation::kCreate || op == Operation::kGet || op == Operation::kUpdate || op == Operation::kAddField))
    return {};
  switch (identity.principal) {
    case Principal::kMaster:
    case Principal::kApiKey:
    case Principal::kSystem: return {};
    case Principal::kRejected: return errors::PermissionDenied(name, class_name);
    case Principal::kAnonymous:
      // Spec §4.1: the CAPTCHA gate runs before any permission check, even on open classes.
      if (IsWrite(op) && identity.gates.captcha) return errors::CaptchaRequired();
      break;
    case Principal::kUser: break;
  }
  if (!cls) {
    // Reads of a class that does not exist find nothing; clients never create classes, unless the
    // application lets a client's first write make one (auth::Gates).
    if (!IsWrite(op)) return {};
    if (op == Operation::kCreate && !identity.gates.closed_new_classes) return {};
    return errors::PermissionDenied(name, class_name);
  }
  const auto* rule_value = cls->class_level_permissions.if_contains(name);
  if (!rule_value || !rule_value->is_object()) return errors::PermissionDenied(name, class_name);
  const auto& rule = rule_value->get_object();
  if (Granted(rule, "*")) return {};
  if (identity.principal == Principal::kAnonymous) {
    // Spec §4.7: which refusal an anonymous reader gets depends on the class's settings.
    if (Granted(rule, "requiresAuthentication")) return errors::UserNeedsAuthentication();
    return errors::PermissionDenied(name, class_name);
  }
  if (Granted(rule, "requiresAuthentication")) return {};
  for (const auto& principal : identity.Principals())
    if (Granted(rule, principal)) return {};
  return errors::PermissionDenied(name, class_name);
}

}  // namespace crmd::auth
