// Group commit on an application's writer connection.
//
// Concurrent writers share one open transaction: each works inside its own savepoint while it
// holds the connection, then leaves. The first writer to leave with its work kept leads the group:
// it waits (at most kMaxGroupWait) while other writers are still working or queued, then issues
// one COMMIT (one fsync) for all of them. Every writer returns from Leave() only after that
// COMMIT succeeded, so an acknowledged write is always durable; if it fails, every member of the
// group gets the error. A writer that rolls back undoes only its own savepoint.
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

#include "storage/sqlite/connection.hpp"

namespace crmd::storage::sqlite {

class GroupCommit {
 public:
  // How long a group's leader waits for writers still working before it commits: long enough to
  // gather writers that arrived together, short enough to be invisible next to an fsync.
  static constexpr std::chrono::microseconds kMaxGroupWait{2000};

  explicit GroupCommit(Connection& writer) : c_(writer) {}

  // Waits for the connection, opens the group's transaction if none is open, and starts
  // `savepoint` (none when null: a member that never rolls back as a whole, whose writes are
  // savepoints of their own). The returned lock is held for the writer's work.
  std::unique_lock<std::mutex> Enter(const char* savepoint);

  // Ends the work: keeps (releases) or rolls back the savepoint. When kept, returns once the
  // group's COMMIT is durable (throws StorageError if it failed). Unlocks `lock`. A member that
  // entered without a savepoint always keeps.
  void Leave(std::unique_lock<std::mutex>& lock, const char* savepoint, bool keep);

  // Exclusive use of the connection outside any group (schema load, integrity check, exclusive
  // writes): waits until no group is open.
  std::unique_lock<std::mutex> Exclusive();

  // Commits on the connection so far (group or exclusive), counted once each COMMIT has returned:
  // a reader that saw a value before starting its read knows its answer is not older than that.
  std::uint64_t Commits() const { return commits_.load(std::memory_order_acquire); }
  void NoteCommit() { commits_.fetch_add(1, std::memory_order_acq_rel); }
  // Whether a writer waits in Exclusive(); read without the lock, which the open group may hold.
  bool ExclusiveWaiting() const { return exclusive_waiting_.load(std::memory_order_acquire) > 0; }

 private:
  Connection& c_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;        // the group's transaction is open
  bool leader_ = false;      // some writer will commit the open group
  bool committing_ = false;  // the COMMIT is running: nobody may join
  int working_ = 0;          // writers between Enter and Leave
  // Writers in Enter, counted before they wait for the mutex: while a COMMIT holds it, the
  // writers piling up behind are exactly the next group, and its leader must see them.
  std::atomic<int> queued_{0};
  // Writers in Exclusive(), counted before they wait for the mutex (as queued_ is), until they
  // have their turn.
  std::atomic<int> exclusive_waiting_{0};
  std::uint64_t generation_ = 0;  // groups committed (or failed) so far
  std::uint64_t failed_generation_ = UINT64_MAX;
  std::string failure_;
  std::atomic<std::uint64_t> commits_{0};
};

}  // namespace crmd::storage::sqlite
