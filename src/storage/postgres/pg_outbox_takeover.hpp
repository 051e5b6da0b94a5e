// How the servers on one PostgreSQL database share the trigger outboxes (storage/outbox_takeover.hpp):
// who is alive, who may hold claims where, and the statements of claims on an application's
// `_crmd_outbox` (claimed_by, claimed_until). Its tables, in schema `crmd`:
//
//   crmd.runners (process PRIMARY KEY, alive_until)
//       A process's liveness: beaten by a server at a fraction of its lease. A process that never
//       beats (the command line, which may import activations) is dead as soon as it registers.
//       Rows of processes dead for a day and holding nothing are removed by the beats.
//   crmd.outbox_holders (process, app_id; PRIMARY KEY both)
//       The process may hold claims in the application's outbox. Written before the process's
//       first claim there (an entry is claimed by its writer from birth); removed by another
//       server once the process is dead and holds nothing there, or with the application's store.
//
// A claim is taken when it is this process's own, nobody's, or expired and held by a process that
// the last Orphans() did not find alive (one that never beat, such as an older release's, is not).
// Every statement names either `crmd` or one application's schema, never both (docs/SCALING.md,
// Citus): the live processes are read apart and passed to the outbox's statements as a parameter.
//
// Thread-safe. Owned by the server's stores (pg_stores.cpp) and shared with each application's store.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "storage/outbox_takeover.hpp"
#include "storage/postgres/connection.hpp"
#include "storage/postgres/pool.hpp"

namespace crmd::storage::postgres {

// The tables above (run by EnsureCrmdSchema with the registry's).
extern const char* const kOutboxTakeoverTables;

class PgOutboxTakeover final : public OutboxTakeover {
 public:
  explicit PgOutboxTakeover(std::shared_ptr<Pool> pool);

  // Before this process's first claim in `app_id`'s outbox (and again after its liveness lapsed,
  // when another server may have forgotten it): registers it as a holder there. Throws
  // StorageError.
  void Register(const std::string& app_id);
  // The processes the last Orphans() found alive, as a text[] parameter: the expired claims of
  // the others may be taken. Null before the first Orphans(): nobody else's may.
  std::optional<std::string> Live() const;
  // The lease of this process's claims made at the birth of an entry (the last KeepAlive's).
  std::chrono::seconds lease() const { return std::chrono::seconds(lease_.load()); }
  // Forgets the holders of `app_id`, whose store is being removed (in `c`'s transaction).
  static void Forget(Connection& c, const std::string& app_id);

  void KeepAlive(std::chrono::seconds lease) override;
  void Retire() override;
  std::vector<OutboxHolder> Orphans(const std::optional<OutboxHolder>& after, std::size_t limit) override;
  OrphanedEntries Look(const OutboxHolder& holder, std::int64_t after, std::size_t limit) override;

 private:
  // The connection of beats and registrations, this object's own: a process's liveness never
  // waits for a pool its requests have taken. Reopened after it broke. `beat_mutex_` held.
  Connection& Beat();
  template <typename F>
  auto OnBeat(F&& f) -> decltype(f(std::declval<Connection&>()));

  std::shared_ptr<Pool> pool_;
  std::mutex beat_mutex_;
  std::unique_ptr<Connection> beat_;           // guarded by beat_mutex_
  std::set<std::string, std::less<>> registered_;  // guarded by beat_mutex_
  mutable std::mutex live_mutex_;
  std::optional<std::string> live_;  // guarded by live_mutex_
  std::atomic<std::int64_t> lease_{60};
};

// The statements on an application's outbox that involve claims; `schema` quoted.
// Binds lane, payload, process, lease in seconds; returns the new id. Claimed by its writer from
// birth.
std::string AddClaimedOutbox(const std::string& schema);
// Binds id, process, lease in seconds, live processes (Live()); returns how many rows it took (0
// or 1) and how many have the id (0 or 1).
std::string ClaimOutbox(const std::string& schema);
// Binds the id to read after, the most entries to return, process, live processes; returns id,
// lane, payload by id.
std::string ReadClaimable(const std::string& schema);

}  // namespace crmd::storage::postgres
