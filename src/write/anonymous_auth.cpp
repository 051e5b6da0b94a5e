#include "write/anonymous_auth.hpp"

#include "schema/system_classes.hpp"
#include "storage/database.hpp"
#include "util/ids.hpp"
#include "write/sign_in.hpp"

namespace crmd::write {

namespace json = boost::json;

namespace {

// Parse's UNSUPPORTED_SERVICE.
constexpr int kUnsupportedService = 252;

ApiError Unsupported() { return ApiError{400, kUnsupportedService, "This authentication method is unsupported."}; }

}  // namespace

Result<std::optional<AnonymousAuth>> ReadAnonymousAuth(const json::object& body) {
  const auto* data = body.if_contains("authData");
  if (!data) return std::optional<AnonymousAuth>();
  if (!data->is_object()) return Unsupported();
  std::optional<AnonymousAuth> out;
  for (const auto& kv : data->get_object()) {
    if (kv.key() != "anonymous") return Unsupported();
    if (kv.value().is_null()) {
      out = AnonymousAuth{};
      continue;
    }
    const auto* id = kv.value().is_object() ? kv.value().get_object().if_contains("id") : nullptr;
    if (!id || !id->is_string() || id->get_string().empty() || id->get_string().size() > kMaxAnonymousIdLength)
      return Unsupported();
    out = AnonymousAuth{ids::HashSecret(id->get_string())};
  }
  return out;
}

Result<std::optional<json::object>> AnonymousLogIn(auth::Context& ctx, const std::string& id_hash) {
  return SignInUser(ctx, [&](storage::WriteTransaction& txn, const schema::ClassSchema& users) -> std::optional<storage::Row> {
    if (!users.FindField(schema::kAnonymousIdHash)) return std::nullopt;
    return storage::FindFirst(txn, users, schema::kAnonymousIdHash, id_hash);
  });
}

}  // namespace crmd::write
