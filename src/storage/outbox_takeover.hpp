// The trigger work a server left when it stopped for good, found by the servers still running
// (issue 33; several servers on one PostgreSQL database, docs/SCALING.md "Trigger runners"). A
// store of one process (SQLite) has nobody to take over from: Stores::outbox_takeover() is null.
//
// What makes the work findable without reading every application's outbox:
//   - each server keeps a row of its own alive (KeepAlive), for a lease from its last beat;
//   - each outbox entry is claimed from its birth, for a lease, by the process that wrote it (its
//     writer runs it), and a process registers as a holder of an application's outbox before its
//     first claim there (the store does both);
//   - so the outboxes to look into are those of the holders whose process is no longer alive: a
//     read of a table with one row per server when every server is alive, whatever the number of
//     applications.
// A claim of a live process is never taken, however old: the process's liveness is its lease.
// Once the process is dead, each of its entries is taken when its own claim's lease ran out too.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "storage/outbox_writes.hpp"

namespace crmd::storage {

// A process that may hold claims in an application's outbox.
struct OutboxHolder {
  std::string process;
  std::string app_id;
  auto operator<=>(const OutboxHolder&) const = default;
};

// What a look into an orphaned holder's outbox found.
struct OrphanedEntries {
  // The holder's entries whose lease ran out, by id, after the id asked for: to run.
  std::vector<OutboxEntry> due;
  // How long until the next of its other entries' leases runs out; nullopt when none is leased.
  std::optional<std::chrono::milliseconds> next;
  // It held nothing more there and is forgotten.
  bool cleared = false;
};

class OutboxTakeover {
 public:
  virtual ~OutboxTakeover() = default;

  // This process is alive for `lease` from now. Call it at a fraction of the lease.
  virtual void KeepAlive(std::chrono::seconds lease) = 0;
  // This process stops: the others take over its entries as their leases run out.
  virtual void Retire() = 0;
  // The holders whose process is not alive (this one's aside), after `after` in (process,
  // application) order, at most `limit`. Also what the store's claims go by: an expired claim of
  // another process is taken only if the last call here did not find that process alive.
  virtual std::vector<OutboxHolder> Orphans(const std::optional<OutboxHolder>& after, std::size_t limit) = 0;
  // The entries of `holder` (an orphan) whose lease ran out, with ids above `after`, at most
  // `limit`; forgets the holder once it holds none. An application whose store is gone is cleared.
  virtual OrphanedEntries Look(const OutboxHolder& holder, std::int64_t after, std::size_t limit) = 0;
};

}  // namespace crmd::storage
