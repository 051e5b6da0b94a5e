// Group commit: the jobs of one run of an application's write queue, or the items of one batch,
// whose grouped writes share one transaction and one durable COMMIT (one fsync) instead of each
// making its own.
//
// A job is not one transaction, so the group is not one either. A job may begin any number of
// writes through the group (WriteGroup::BeginWrite), or none; an exclusive one among them, which
// flushes the group and then runs alone, so that a schema change is published only after its own
// commit; and it may flush the group itself before slow work that needs no store (a password
// hash), so that the writes of others do not wait for it. So a group commits at every Flush(), and
// WriteGroups::CommitBatch tells each job, once the last commit is durable, whether every commit
// that held its grouped writes succeeded. A failed COMMIT fails exactly the jobs that wrote into
// it, and drops the after-flush actions waiting for it.
//
// Not thread-safe: a group is used by the one thread that runs its jobs. It holds the store from
// its first grouped write to its flush, so groups and the writes of other threads take turns.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "storage/commit_outcome.hpp"
#include "storage/write_transaction.hpp"

namespace crmd::storage {

class GroupTransaction;  // storage/group_transaction.hpp: the store's half

// A write group as its jobs see it. Made by WriteGroups::CommitBatch, for as long as it runs.
class WriteGroup {
 public:
  ~WriteGroup();  // flushes
  WriteGroup(const WriteGroup&) = delete;
  WriteGroup& operator=(const WriteGroup&) = delete;

  // Grouped: a write whose Commit() returns at once and whose work is durable at the group's next
  // flush. Exclusive: the group is flushed first, then the write runs alone as RecordStore's do
  // (durable at its own Commit()).
  std::unique_ptr<WriteTransaction> BeginWrite(bool exclusive);
  // Makes the grouped writes so far durable (one COMMIT) and lets go of the store, then runs the
  // after-flush actions waiting for it, or drops them if that COMMIT failed. Never throws: a
  // failure is logged and reported by CommitBatch for the jobs that wrote into it.
  void Flush();
  // Runs `action` on this thread right after the flush that makes the writes so far durable, or
  // never if that flush fails. It must not block: it hands the work on. An action that throws is
  // logged and the others still run.
  void AfterFlush(std::function<void()> action);
  // Whether a writer of another thread waits for an exclusive turn, which it gets at the next
  // Flush(): for tests, which must not guess it from a sleep.
  bool ExclusiveWaiting() const;

 private:
  friend class WriteGroups;
  WriteGroup(std::unique_ptr<GroupTransaction> txn, std::vector<CommitOutcome>& outcomes);
  // Flushes (and so fails) the open transaction if an error made the store roll all of it back,
  // so that no write begun from now on is counted in a lost commit.
  void FlushIfLost();

  std::unique_ptr<GroupTransaction> txn_;
  std::vector<CommitOutcome>& outcomes_;  // per job of the batch: the worst of the commits holding its writes
  std::size_t job_ = 0;         // the job running now
  std::vector<std::size_t> members_;  // the jobs with grouped writes in the open transaction, in order
  std::vector<std::function<void()>> after_flush_;
};

// What runs write groups: the record store (RecordStore), and all an application's write queue
// needs of it.
class WriteGroups {
 public:
  using Job = std::function<void(WriteGroup&)>;

  virtual ~WriteGroups() = default;

  // Runs `jobs` one after another in one write group, flushes it, and returns, for each job, the
  // outcome of its writes: the worst of the commits that held its grouped writes (a job that began
  // none is durable). Its exclusive writes are not counted: their own Commit()
  // throws when it fails, and the job answers that. A job that throws is logged and counted as it
  // stands (its write units rolled back as they unwound), and the others still run. Returns after
  // the last commit, with every action the jobs left for a successful flush run.
  std::vector<CommitOutcome> CommitBatch(std::span<const Job> jobs);

 private:
  virtual std::unique_ptr<GroupTransaction> BeginGroupTransaction() = 0;
};

}  // namespace crmd::storage
