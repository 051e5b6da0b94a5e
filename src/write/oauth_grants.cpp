#include "write/oauth_grants.hpp"

#include "app/application.hpp"
#include "app/write_unit.hpp"
#include "schema/system_classes.hpp"
#include "storage/database.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"
#include "util/time.hpp"

namespace crmd::write {

namespace json = boost::json;
namespace oauth = auth::oauth;

namespace {

const schema::ClassSchema& Sessions(const app::WriteUnit& unit) { return *unit.schema()->Find(schema::kSessionClass); }

void InsertGrant(storage::WriteTransaction& txn, const schema::ClassSchema& cls, const oauth::GrantRow& grant) {
  storage::Row row;
  row.created_at = row.updated_at = timeutil::NowIso();
  row.acl = ToJson(json::object{{grant.user_id, json::object{{"read", true}, {"write", true}}}});
  const std::vector<std::string> columns{"user", "expiresAt", "createdWith", schema::kSessionTokenHash};
  row.cells = {grant.user_id, timeutil::FormatIso(grant.expires_ms), ToJson(oauth::GrantObject(grant.grant)),
               grant.token_hash};
  storage::InsertWithNewId(txn, cls, columns, row, [](storage::Row&) {});
}

void SetGrant(storage::WriteTransaction& txn, const schema::ClassSchema& cls, storage::Row row, const oauth::Grant& grant) {
  row.updated_at = timeutil::NowIso();
  const std::vector<std::string> columns{"createdWith"};
  row.cells = {ToJson(oauth::GrantObject(grant))};
  txn.Update(cls, columns, row);
}

// Every row of `family`: a revoked grant.
void DeleteFamily(storage::WriteTransaction& txn, const schema::ClassSchema& cls, const std::string& user_id,
                  const std::string& family) {
  schema::Query q;
  q.where = schema::FieldEquals("user", user_id);
  q.limit = -1;
  std::vector<std::string> ids;
  txn.Find(cls, q, [&](const storage::Row& row) {
    if (auto g = oauth::GrantOf(cls, row); g && g->family == family) ids.push_back(row.object_id);
    return true;
  });
  for (const auto& id : ids) txn.Delete(cls, id);
}

oauth::Error ServerError(const ApiError& error) { return oauth::Error{500, "server_error", error.message}; }

}  // namespace

std::variant<std::optional<std::string>, oauth::Error> DecideTicket(auth::Context& ctx, const oauth::Ticket& ticket,
                                                                   bool allow) {
  using Outcome = std::variant<std::optional<std::string>, oauth::Error>;
  // The application's writes take turns (app::RunWrite), across servers too: the second post of a
  // ticket reads the first one's row.
  auto outcome = app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Result<Outcome> {
    auto& txn = unit.txn();
    const auto& cls = Sessions(unit);
    const oauth::TicketDecision decision = oauth::DecideTicket(*ctx.credentials, ticket, allow);
    if (storage::FindFirst(txn, cls, schema::kSessionTokenHash, decision.spent.token_hash))
      return Outcome(oauth::AlreadyDecided());
    InsertGrant(txn, cls, decision.spent);
    if (!decision.code) return Outcome(std::optional<std::string>());
    InsertGrant(txn, cls, *decision.code);
    return Outcome(std::optional<std::string>(decision.code->token));
  });
  if (!outcome.ok()) return ServerError(outcome.error());
  return std::move(outcome).value();
}

std::variant<oauth::Tokens, oauth::Error> SpendGrant(auth::Context& ctx, const oauth::Client& client,
                                                     const oauth::SpendRequest& request) {
  using Outcome = std::variant<oauth::Tokens, oauth::Error>;
  auto outcome = app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Result<Outcome> {
    auto& txn = unit.txn();
    const auto& cls = Sessions(unit);
    auto row = storage::FindFirst(txn, cls, schema::kSessionTokenHash, request.token_hash);
    auto decision = oauth::JudgeSpend(*ctx.credentials, client, request, cls, row ? &*row : nullptr);
    if (auto* refused = std::get_if<oauth::Error>(&decision)) return Outcome(std::move(*refused));
    // Committed with the refusal: the answer is a value, not an error that rolls the unit back.
    if (auto* revoke = std::get_if<oauth::RevokeFamily>(&decision)) {
      DeleteFamily(txn, cls, revoke->user_id, revoke->family);
      return Outcome(std::move(revoke->refusal));
    }
    auto& rotation = std::get<oauth::Rotation>(decision);
    SetGrant(txn, cls, *row, rotation.spent);
    InsertGrant(txn, cls, rotation.access);
    InsertGrant(txn, cls, rotation.refresh);
    return Outcome(std::move(rotation.tokens));
  });
  if (!outcome.ok()) return ServerError(outcome.error());
  return std::move(outcome).value();
}

void RevokeGrant(auth::Context& ctx, std::string_view token) {
  if (!oauth::Revocable(token)) return;
  const std::string token_hash = ids::HashSecret(token);
  (void)app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Status {
    auto& txn = unit.txn();
    const auto& cls = Sessions(unit);
    auto row = storage::FindFirst(txn, cls, schema::kSessionTokenHash, token_hash);
    auto grant = row ? oauth::GrantOf(cls, *row) : std::nullopt;
    if (!row || !grant) return Status();
    if (oauth::RevokesFamily(*grant)) DeleteFamily(txn, cls, storage::TextOf(cls, *row, "user"), grant->family);
    else txn.Delete(cls, row->object_id);
    return Status();
  });
}

}  // namespace crmd::write
