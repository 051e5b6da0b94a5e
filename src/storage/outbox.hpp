// The outbox of trigger activations as the trigger runner reads it, outside any write: what
// committed and is left to run. Entries are added and changed inside write transactions
// (storage/outbox_writes.hpp).
//
// Thread-safe, like the store that implements it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "storage/outbox_writes.hpp"

namespace crmd::storage {

class Outbox {
 public:
  virtual ~Outbox() = default;

  // Outbox entries with an id above `after`, in id order, at most `limit` (committed ones only).
  virtual std::vector<OutboxEntry> ReadOutbox(std::int64_t after, std::size_t limit) = 0;
  // The same, less the entries another process holds (outbox_takeover.hpp): what this process's
  // trigger runner may claim now. A store of one process has nobody to share with.
  virtual std::vector<OutboxEntry> ReadClaimable(std::int64_t after, std::size_t limit) { return ReadOutbox(after, limit); }

  // Takes (or keeps) entry `id` for this process's trigger runner for `lease`, so that several
  // servers that find the same entry (one restarting reads every outbox, one taking over a dead
  // server's work) run it once: kHeld while another process holds it (it is alive, or its lease
  // runs: that process runs it, or whoever takes over once it is dead), kGone when the entry is no
  // more. A store of one process (SQLite) has nobody to share with.
  enum class Claim { kTaken, kHeld, kGone };
  virtual Claim ClaimOutbox(std::int64_t id, std::chrono::seconds lease) {
    (void)id, (void)lease;
    return Claim::kTaken;
  }
};

}  // namespace crmd::storage
