#include "storage/postgres/pg_outbox_takeover.hpp"

#include <fmt/format.h>


#include "storage/postgres/pg_dialect.hpp"
#include "storage/postgres/pg_store.hpp"

namespace crmd::storage::postgres {

const char* const kOutboxTakeoverTables = R"sql(
CREATE TABLE IF NOT EXISTS crmd.runners (process text PRIMARY KEY, alive_until timestamptz NOT NULL);
CREATE TABLE IF NOT EXISTS crmd.outbox_holders (process text NOT NULL, app_id text NOT NULL, PRIMARY KEY (process, app_id));
)sql";

namespace {

// A process that stopped beating this long ago and holds nothing is forgotten: the command line's
// processes (a random name each) would otherwise pile up. Long enough that no process still
// running can be a day behind its own beat.
constexpr const char* kForgetDeadAfter = "1 day";

}  // namespace

PgOutboxTakeover::PgOutboxTakeover(std::shared_ptr<Pool> pool) : pool_(std::move(pool)) {}

Connection& PgOutboxTakeover::Beat() {
  if (!beat_ || !beat_->Healthy()) beat_ = std::make_unique<Connection>(pool_->conninfo());
  return *beat_;
}

template <typename F>
auto PgOutboxTakeover::OnBeat(F&& f) -> decltype(f(std::declval<Connection&>())) {
  try {
    return f(Beat());
  } catch (...) {
    if (beat_ && !beat_->Healthy()) beat_.reset();
    throw;
  }
}

void PgOutboxTakeover::Register(const std::string& app_id) {
  std::lock_guard lock(beat_mutex_);
  if (registered_.contains(app_id)) return;
  OnBeat([&](Connection& c) {
    // A process that never beat gets a liveness row too, already lapsed: the orphans are found
    // from the dead processes' rows.
    c.Query("WITH runner AS (INSERT INTO crmd.runners (process, alive_until) VALUES ($1, now()) ON CONFLICT DO NOTHING) "
            "INSERT INTO crmd.outbox_holders (process, app_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
            {pool_->process(), app_id});
  });
  registered_.insert(app_id);
}

std::optional<std::string> PgOutboxTakeover::Live() const {
  std::lock_guard lock(live_mutex_);
  return live_;
}

void PgOutboxTakeover::Forget(Connection& c, const std::string& app_id) {
  c.Query("DELETE FROM crmd.outbox_holders WHERE app_id = $1", {app_id});
}

void PgOutboxTakeover::KeepAlive(std::chrono::seconds lease) {
  lease_.store(lease.count());
  std::lock_guard lock(beat_mutex_);
  const bool was_alive = OnBeat([&](Connection& c) {
    auto rows = c.Query(
        fmt::format("WITH was AS (SELECT alive_until > now() AS alive FROM crmd.runners WHERE process = $1), "
                    "forgotten AS (DELETE FROM crmd.runners r WHERE r.process <> $1 AND r.alive_until < now() - interval '{}' "
                    "AND NOT EXISTS (SELECT 1 FROM crmd.outbox_holders h WHERE h.process = r.process)) "
                    "INSERT INTO crmd.runners (process, alive_until) VALUES ($1, now() + $2 * interval '1 second') "
                    "ON CONFLICT (process) DO UPDATE SET alive_until = EXCLUDED.alive_until "
                    "RETURNING coalesce((SELECT alive FROM was), false)",
                    kForgetDeadAfter),
        {pool_->process(), std::to_string(lease.count())});
    return rows.Value(0, 0) == std::optional<std::string_view>("t");
  });
  // Lapsed (or first beat): meanwhile another server may have found this process dead and
  // forgotten its holders, so each is registered again before its next claim.
  if (!was_alive) registered_.clear();
}

void PgOutboxTakeover::Retire() {
  std::lock_guard lock(beat_mutex_);
  OnBeat([&](Connection& c) { c.Query("UPDATE crmd.runners SET alive_until = now() WHERE process = $1", {pool_->process()}); });
}

std::vector<OutboxHolder> PgOutboxTakeover::Orphans(const std::optional<OutboxHolder>& after, std::size_t limit) {
  auto c = pool_->Acquire(false);
  auto runners = c->Query("SELECT process, alive_until > now() FROM crmd.runners");
  std::vector<std::string> live, dead;
  for (int r = 0; r < runners.size(); ++r) {
    std::string name(*runners.Value(r, 0));
    if (runners.Value(r, 1) == std::optional<std::string_view>("t")) live.push_back(std::move(name));
    else if (name != pool_->process()) dead.push_back(std::move(name));
  }
  {
    std::lock_guard lock(live_mutex_);
    live_ = ArrayLiteral(live);
  }
  std::vector<OutboxHolder> out;
  if (dead.empty() || limit == 0) return out;  // everyone alive: the one statement of an idle scan
  auto rows = c->Query(
      "SELECT process, app_id FROM crmd.outbox_holders WHERE process = ANY($1::text[]) AND (process, app_id) > ($2, $3) "
      "ORDER BY process, app_id LIMIT $4",
      {ArrayLiteral(dead), after ? after->process : std::string(), after ? after->app_id : std::string(), std::to_string(limit)});
  for (int r = 0; r < rows.size(); ++r) out.push_back({std::string(*rows.Value(r, 0)), std::string(*rows.Value(r, 1))});
  return out;
}

OrphanedEntries PgOutboxTakeover::Look(const OutboxHolder& holder, std::int64_t after, std::size_t limit) {
  OrphanedEntries out;
  auto c = pool_->Acquire(false);
  const auto forget = [&] {
    // Only while the process is still dead: one that came back registers (and holds) again.
    out.cleared = c->Query("DELETE FROM crmd.outbox_holders h WHERE process = $1 AND app_id = $2 AND EXISTS "
                           "(SELECT 1 FROM crmd.runners r WHERE r.process = $1 AND r.alive_until < now())",
                           {holder.process, holder.app_id})
                      .Affected() > 0;
    return out;
  };
  if (c->Query("SELECT 1 FROM crmd.stores WHERE app_id = $1", {holder.app_id}).size() == 0) return forget();
  const std::string outbox = QuoteName(SchemaOf(holder.app_id)) + "._crmd_outbox";
  auto due = c->Query("SELECT id, lane, payload FROM " + outbox +
                          " WHERE claimed_by = $1 AND claimed_until < now() AND id > $2 ORDER BY id LIMIT $3",
                      {holder.process, std::to_string(after), std::to_string(limit)});
  for (int r = 0; r < due.size(); ++r)
    out.due.push_back({due.Integer(r, 0), static_cast<int>(due.Integer(r, 1)), std::string(*due.Value(r, 2))});
  if (out.due.size() >= limit) return out;  // more to read: looked into again at once
  auto left = c->Query("SELECT count(*), ceil(extract(epoch FROM min(claimed_until) FILTER (WHERE claimed_until >= now()) - now()) * 1000)::bigint "
                       "FROM " + outbox + " WHERE claimed_by = $1",
                       {holder.process});
  if (left.Value(0, 1)) out.next = std::chrono::milliseconds(left.Integer(0, 1));
  if (left.Integer(0, 0) == 0) return forget();
  return out;
}

std::string AddClaimedOutbox(const std::string& schema) {
  return "INSERT INTO " + schema +
         "._crmd_outbox (lane, payload, claimed_by, claimed_until) VALUES ($1, $2, $3, now() + $4 * interval '1 second') RETURNING id";
}

std::string ClaimOutbox(const std::string& schema) {
  return fmt::format(
      "WITH taken AS (UPDATE {0}._crmd_outbox SET claimed_by = $2, claimed_until = now() + $3 * interval '1 second' "
      "WHERE id = $1 AND (claimed_by IS NULL OR claimed_by = $2 OR (claimed_until < now() AND NOT claimed_by = ANY($4::text[]))) "
      "RETURNING id) "
      "SELECT (SELECT count(*) FROM taken), (SELECT count(*) FROM {0}._crmd_outbox WHERE id = $1)",
      schema);
}

std::string ReadClaimable(const std::string& schema) {
  return "SELECT id, lane, payload FROM " + schema +
         "._crmd_outbox WHERE id > $1 AND (claimed_by IS NULL OR claimed_by = $3 OR "
         "(claimed_until < now() AND NOT claimed_by = ANY($4::text[]))) ORDER BY id LIMIT $2";
}

}  // namespace crmd::storage::postgres
