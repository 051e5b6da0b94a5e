#include "write/user_rules.hpp"

#include "auth/password.hpp"
#include "auth/password_gate.hpp"
#include "schema/names.hpp"
#include "schema/system_classes.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"

namespace crmd::write {

namespace json = boost::json;

namespace {

// True when another `_User` row than `self` holds `value` in `field`.
bool TakenByAnother(storage::WriteTransaction& txn, const schema::ClassSchema& cls, const std::string& field,
                    const std::string& value, const std::string& self) {
  schema::Query q;
  q.where = schema::FieldEquals(field, value);
  q.limit = 2;
  bool taken = false;
  txn.Find(cls, q, [&](const storage::Row& row) {
    taken = taken || row.object_id != self;
    return !taken;
  });
  return taken;
}

// Whether `body` names a rights field, also as the head of a dotted key (`authData.google`).
// Where the application takes anonymous users, `authData` itself is read by ReadAnonymousAuth,
// which takes the anonymous provider alone: a user's own sign-in, no right over anyone.
bool NamesRightsField(const json::object& body, const auth::Identity& identity) {
  for (const auto& kv : body) {
    const std::string_view key = kv.key();
    if (key == "authData" && identity.gates.anonymous_users) continue;
    const std::string_view head = key.substr(0, key.find('.'));
    for (const std::string_view field : kRightsFields)
      if (head == field) return true;
  }
  return false;
}

}  // namespace

Result<UserWrite> PrepareUserWrite(const json::object& body, WriteKind kind, const auth::Identity& identity,
                                   std::string_view remote_ip) {
  UserWrite out;
  out.unverify_email = kind == WriteKind::kUpdate && !identity.IsMaster() && body.contains("email");
  if (identity.gates.anonymous_users) {
    CRMD_ASSIGN(auto anonymous, ReadAnonymousAuth(body));
    out.anonymous = std::move(anonymous);
  }
  // An anonymous user has no password (Parse): their id signs them in.
  const bool anonymous_signup = kind == WriteKind::kCreate && out.anonymous && out.anonymous->id_hash &&
                                !body.contains("password");
  if (const auto* password = body.if_contains("password")) {
    if (!password->is_string() || password->get_string().empty()) {
      if (kind == WriteKind::kCreate) return errors::PasswordMissing();
      return errors::PasswordPolicy();
    }
    if (identity.gates.password_policy && !auth::MeetsPasswordPolicy(password->get_string()))
      return errors::PasswordPolicy();
    CRMD_ASSIGN(auto permit, auth::PasswordGate::Instance().Enter(
                                 identity.IsMaster() ? std::nullopt : std::optional<std::string_view>(remote_ip)));
    out.password_hash = auth::HashPassword(password->get_string());
  } else if (const auto* hash = body.if_contains(schema::kHashedPassword)) {
    // Imports from a Parse database keep their bcrypt hashes (verified, then upgraded at login).
    if (!identity.IsMaster() || !hash->is_string() || !auth::IsImportableHash(hash->get_string()))
      return errors::InvalidFieldName(schema::kHashedPassword);
    out.password_hash = std::string(hash->get_string());
  } else if (kind == WriteKind::kCreate && !anonymous_signup) {
    return errors::PasswordMissing();
  }
  return out;
}

Status CheckUserCreator(const auth::Identity& identity, const json::object& body) {
  if (identity.IsMaster() || !NamesRightsField(body, identity)) return {};
  return errors::PermissionDenied("create", "_User");
}

Status CheckUserWriter(const auth::Identity& identity, const json::object& body, const std::string& target_id) {
  if (identity.IsMaster()) return {};
  if (identity.principal == auth::Principal::kUser && identity.user_id != target_id)
    return errors::CannotModifyUser(target_id);
  // Parse lets a user change their own sign-in names and password; an application whose users
  // may update their own record (auth::Gates::self_update) does too.
  const bool own = identity.principal == auth::Principal::kUser && identity.gates.self_update;
  for (const char* key : {"password", "email", "username"})
    if (body.contains(key) && !own) return errors::PermissionDenied("update", "_User");
  if (NamesRightsField(body, identity)) return errors::PermissionDenied("update", "_User");
  return {};
}


Status ApplyRoleRules(storage::WriteTransaction& txn, const schema::ClassSchema& cls, const json::object& body,
                      WriteKind kind, const std::string& self) {
  const auto* name = body.if_contains("name");
  if (kind == WriteKind::kUpdate) {
    if (name) return ApiError{400, 136, "A role's name can only be set before it has been saved."};
    return {};
  }
  auto valid = [](std::string_view n) {
    if (n.empty() || n.size() > schema::kMaxNameLength) return false;
    for (char c : n)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != ' ') return false;
    return true;
  };
  if (!name || !name->is_string() || !valid(name->get_string()))
    return ApiError{400, 139, "Role names can only contain alphanumeric characters, _, -, and spaces."};
  if (TakenByAnother(txn, cls, "name", std::string(name->get_string()), self))
    return ApiError{400, errors::kDuplicateValue, "Cannot add duplicate role name of " + std::string(name->get_string()) + "."};
  return {};
}

std::string DefaultUserAcl(const std::string& user_id) {
  return ToJson(json::object{{"*", json::object{{"read", true}}},
                             {user_id, json::object{{"read", true}, {"write", true}}}});
}

Status ApplyUserRules(storage::WriteTransaction& txn, const schema::ClassSchema& cls, const json::object& body,
                      WriteKind kind, const std::string& self, const UserWrite& user, FieldChanges& changes,
                      bool& end_sessions) {
  const auto* username = body.if_contains("username");
  if ((kind == WriteKind::kCreate && !username) ||
      (username && (!username->is_string() || username->get_string().empty())))
    return errors::UsernameMissing();
  if (username && TakenByAnother(txn, cls, "username", std::string(username->get_string()), self))
    return errors::UsernameTaken();
  if (const auto* email = body.if_contains("email"); email && email->is_string() && !email->get_string().empty())
    if (TakenByAnother(txn, cls, "email", std::string(email->get_string()), self)) return errors::EmailTaken();
  if (user.password_hash) {
    changes.Set(schema::kHashedPassword, *user.password_hash);
    end_sessions = true;
  }
  if (kind == WriteKind::kUpdate && (user.password_hash || body.contains("email"))) {
    for (const char* column : {schema::kResetTokenHash, schema::kResetTokenExpires})
      changes.Set(column, std::monostate{});
  }
  // `emailVerified` is a right (issue 31 #3): a new address a user set themselves has not been
  // verified, as in Parse.
  if (user.unverify_email && cls.FindField("emailVerified")) changes.Set("emailVerified", std::int64_t{0});
  if (user.anonymous) {
    if (const auto& hash = user.anonymous->id_hash) {
      // One user per id, as one per username (Parse's ACCOUNT_ALREADY_LINKED).
      if (TakenByAnother(txn, cls, schema::kAnonymousIdHash, *hash, self))
        return ApiError{400, 208, "this auth is already used"};
      changes.Set(schema::kAnonymousIdHash, *hash);
    } else {
      changes.Set(schema::kAnonymousIdHash, std::monostate{});
    }
  }
  if (const auto* active = body.if_contains("active"); active && active->is_bool() && !active->get_bool())
    end_sessions = true;  // a deactivated user's tokens stop working at once
  return {};
}

}  // namespace crmd::write
