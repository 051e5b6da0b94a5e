#include "api/users.hpp"

#include "api/records.hpp"
#include "app/application.hpp"
#include "auth/login.hpp"
#include "auth/password_gate.hpp"
#include "auth/password_reset.hpp"
#include "auth/sessions.hpp"
#include "query/read.hpp"
#include "schema/system_classes.hpp"
#include "util/errors.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"
#include "write/anonymous_auth.hpp"
#include "write/login_attempt.hpp"
#include "write/record_writer.hpp"
#include "write/reset_tokens.hpp"
#include "write/sign_in.hpp"
#include "write/session_writes.hpp"

namespace crmd::api {

namespace json = boost::json;

namespace {

constexpr const char* kUser = "_User";
// The length of the username an anonymous user gets: Parse's.
constexpr std::size_t kAnonymousUsernameLength = 25;
// Parse's INVALID_VALUE.
constexpr int kInvalidValue = 162;

// `/users/me`: the session's own user, read through the read pipeline like any record, as the
// system identity (issue 32): a user always reads their own record, whatever `_User`'s class
// permissions say; with the token the session was opened with.
Result<boost::json::object> CurrentUser(const auth::Context& ctx, std::string_view token) {
  auth::Context self = ctx;
  self.identity = auth::Identity::System();
  auto user = query::GetRecord(self, kUser, ctx.identity.user_id, {}, std::nullopt);
  if (!user.ok()) return errors::InvalidSessionToken();  // the user went with the session's check
  boost::json::object out = std::move(user).value();
  out["sessionToken"] = token;
  return out;
}

// `/users/me` with a key beside the token: the key decides what the request may do, the token
// still names who "me" is (Parse answers the session's user too; crmd answered 209).
Result<boost::json::object> Me(const auth::Context& ctx, std::optional<std::string_view> token) {
  if (!token) return errors::InvalidSessionToken();
  if (ctx.identity.principal == auth::Principal::kUser) return CurrentUser(ctx, *token);
  auto session = auth::ResolveSession(*ctx.app, *token);
  if (!session.ok()) return session.error();
  auth::Context as_user = ctx;
  as_user.identity = std::move(session).value();
  return CurrentUser(as_user, *token);
}

Response Answer(int status, Result<json::object> result) {
  if (!result.ok()) return ErrorResponse(result.error());
  return JsonResponse(status, result.value());
}

std::string_view StringMember(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

Response SignUp(const Request& request, auth::Context& ctx) {
  // Spec §4.7: sign-up needs the master or an API key, unless the application opened it
  // (auth::Gates); the CAPTCHA gate is the record API's.
  if (!ctx.identity.IsMaster() && ctx.identity.gates.signup_needs_key)
    return ErrorResponse(errors::PermissionDenied("create", kUser));
  json::value storage;
  auto body = BodyObject(request, storage);
  if (!body.ok()) return ErrorResponse(body.error());
  const json::object* sent = body.value();
  json::object anonymous_signup;
  if (ctx.identity.gates.anonymous_users && sent->contains("authData") && !sent->contains("password")) {
    auto asked = write::ReadAnonymousAuth(*sent);
    if (!asked.ok()) return ErrorResponse(asked.error());
    if (asked.value() && asked.value()->id_hash) {
      // No password to hash, but a user made or signed in all the same: a caller without a key
      // spends its address's budget as a password login does (--password-rate), so that one
      // address cannot make users without bound.
      if (!ctx.identity.IsMaster()) {
        if (auto spent = auth::PasswordGate::Instance().Spend(ctx.remote_ip); !spent.ok()) return ErrorResponse(spent.error());
      }
      // Parse: an id already linked signs its user in (200); a new one signs a user up.
      auto signed_in = write::AnonymousLogIn(ctx, *asked.value()->id_hash);
      if (!signed_in.ok()) return ErrorResponse(signed_in.error());
      if (signed_in.value()) return JsonResponse(200, *signed_in.value());
      if (!sent->contains("username")) {
        anonymous_signup = *sent;
        anonymous_signup["username"] = ids::RandomAlnum(kAnonymousUsernameLength);
        sent = &anonymous_signup;
      }
    }
  }
  std::string token;
  auto created = write::CreateRecord(ctx, kUser, *sent, &token);
  if (!created.ok()) return ErrorResponse(created.error());
  created.value()["sessionToken"] = token;
  // The SDK learns the name made up for an anonymous user from the answer, as from Parse's.
  if (sent == &anonymous_signup) created.value()["username"] = anonymous_signup.at("username");
  return JsonResponse(201, created.value());
}

Response UpdateUser(const Request& request, auth::Context& ctx, const std::string& id) {
  // Spec §4.7's 206 and own-record rules are enforced by the write pipeline for every route.
  json::value storage;
  auto body = BodyObject(request, storage);
  if (!body.ok()) return ErrorResponse(body.error());
  return Answer(200, write::UpdateRecord(ctx, kUser, id, *body.value()));
}

}  // namespace

Response HandleUsers(const Request& request, const Target& target, auth::Context& ctx,
                     std::optional<std::string_view> token) {
  const auto& s = target.segments;
  const std::string& route = s[0];
  if (route == "login" && s.size() == 1 && request.method == Method::kPost) {
    json::value storage;
    auto body = BodyObject(request, storage);
    if (!body.ok()) return ErrorResponse(body.error());
    auto check = auth::CheckPassword(ctx, StringMember(*body.value(), "username"), StringMember(*body.value(), "password"));
    if (!check.ok()) return ErrorResponse(check.error());
    return Answer(200, write::RecordLogin(ctx, check.value()));
  }
  // Parse's `verifyPassword` (parseNames gate): a login attempt that opens no session, so it
  // counts toward the lock as any login does.
  if (route == "verifyPassword" && s.size() == 1) {
    json::value storage;
    std::string username = target.Param("username"), password = target.Param("password");
    if (request.method == Method::kPost) {
      auto body = BodyObject(request, storage);
      if (!body.ok()) return ErrorResponse(body.error());
      username = StringMember(*body.value(), "username");
      password = StringMember(*body.value(), "password");
    }
    if (username.empty()) return ErrorResponse(errors::UsernameMissing());
    if (password.empty()) return ErrorResponse(errors::PasswordMissing());
    auto check = auth::CheckPassword(ctx, username, password);
    if (!check.ok()) return ErrorResponse(check.error());
    auto user = write::RecordLogin(ctx, check.value(), /*open_session=*/false);
    if (user.ok()) user.value().erase(schema::kFailedLogins);
    return Answer(200, std::move(user));
  }
  // Parse's `loginAs` (parseNames gate; the route table keeps it the keys'): a session for a user.
  if (route == "loginAs" && s.size() == 1) {
    json::value storage;
    auto body = BodyObject(request, storage);
    if (!body.ok()) return ErrorResponse(body.error());
    const std::string user_id(StringMember(*body.value(), "userId"));
    if (user_id.empty()) return ErrorResponse(ApiError{400, kInvalidValue, "userId must not be empty, null, or undefined"});
    auto signed_in = write::SignInUser(ctx, [&](storage::WriteTransaction& txn, const schema::ClassSchema& users) {
      return txn.Get(users, user_id);
    });
    if (!signed_in.ok()) return ErrorResponse(signed_in.error());
    if (!signed_in.value()) return ErrorResponse(ApiError{404, errors::kObjectNotFound, "user not found"});
    return JsonResponse(200, *signed_in.value());
  }
  if (route == "logout" && s.size() == 1 && request.method == Method::kPost) {
    if (ctx.identity.principal != auth::Principal::kUser) return ErrorResponse(errors::InvalidSessionToken());
    write::DeleteSession(ctx, ctx.identity.session_id);
    return JsonResponse(200, json::object{});
  }
  if (route == "requestPasswordReset" && s.size() == 1 && request.method == Method::kPost) {
    json::value storage;
    auto body = BodyObject(request, storage);
    if (!body.ok()) return ErrorResponse(body.error());
    auto asked = auth::RequestPasswordReset(ctx, StringMember(*body.value(), "email"), write::StoreResetToken);
    if (!asked.ok()) return ErrorResponse(asked.error());
    return JsonResponse(200, json::object{{"message", "Your request will be processed shortly"}});
  }
  if (route == "users") {
    if (s.size() == 1) {
      if (request.method == Method::kPost) return SignUp(request, ctx);
      if (request.method == Method::kGet) {  // a query on _User, with every parameter of §4.2
        Target as_class = target;
        as_class.segments = {"classes", kUser};
        return HandleRecords(request, as_class, ctx);
      }
    } else if (s.size() == 2 && s[1] == "me" && request.method == Method::kGet) {
      return Answer(200, Me(ctx, token));
    } else if (s.size() == 2) {
      const std::string& id = s[1];
      switch (request.method) {
        case Method::kGet: return Answer(200, query::GetRecord(ctx, kUser, id, {}, std::nullopt));
        case Method::kPut: return UpdateUser(request, ctx, id);
        case Method::kDelete: return Answer(200, write::DeleteRecord(ctx, kUser, id));
        default: break;
      }
    }
  }
  return ErrorResponse(errors::RouteNotFound(request.method_name, target.path));
}

}  // namespace crmd::api
