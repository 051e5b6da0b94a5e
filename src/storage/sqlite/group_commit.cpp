#include "storage/sqlite/group_commit.hpp"

#include "metrics/metrics.hpp"
#include "storage/database.hpp"

namespace crmd::storage::sqlite {

std::unique_lock<std::mutex> GroupCommit::Enter(const char* savepoint) {
  ++queued_;
  std::unique_lock lock(mutex_);
  // Joins an open group, but opens no new one while an exclusive writer waits: a queue that opens
  // group after group would otherwise keep a schema change waiting indefinitely. Never joins a
  // group whose transaction an error made SQLite roll back: a write there would commit on its
  // own, outside the group, and then be reported lost with it; it waits for that group to fail.
  changed_.wait(lock, [&] {
    return !committing_ && (open_ ? c_.InTransaction() : exclusive_waiting_ == 0);
  });
  --queued_;
  if (!open_) {
    c_.Run("BEGIN IMMEDIATE");
    open_ = true;
  }
  ++working_;
  if (!savepoint) return lock;
  try {
    c_.Run(std::string("SAVEPOINT ") + savepoint);
  } catch (...) {
    --working_;
    throw;
  }
  return lock;
}

void GroupCommit::Leave(std::unique_lock<std::mutex>& lock, const char* savepoint, bool keep) {
  const std::string name(savepoint ? savepoint : "");
  --working_;
  if (!keep && savepoint) {
    try {
      c_.Exec("ROLLBACK TO " + name + "; RELEASE " + name);
    } catch (const StorageError&) {
      // The savepoint is already gone (SQLite rolled the statement back): nothing of ours is left.
    }
    if (!leader_ && working_ == 0 && open_) {
      // Nobody kept anything in this group: close the empty transaction.
      try {
        c_.Exec("ROLLBACK");
      } catch (const StorageError&) {
      }
      open_ = false;
    }
    changed_.notify_all();
    lock.unlock();
    return;
  }
  if (savepoint) c_.Run("RELEASE " + name);
  const std::uint64_t mine = generation_;
  if (leader_) {
    changed_.notify_all();  // the leader may be waiting for us to finish
    changed_.wait(lock, [&] { return generation_ != mine; });
  } else {
    leader_ = true;
    const auto deadline = std::chrono::steady_clock::now() + kMaxGroupWait;
    // A lost transaction (rolled back by an error) is failed at once: nobody can join it.
    changed_.wait_until(lock, deadline,
                        [&] { return (working_ == 0 && queued_.load() == 0) || !c_.InTransaction(); });
    // Writers still working past the deadline wait for the next group's commit instead.
    committing_ = true;
    while (working_ > 0) changed_.wait(lock);
    try {
      const auto started = std::chrono::steady_clock::now();
      c_.Run("COMMIT");
      metrics::ObserveCommit("grouped", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    } catch (const StorageError& e) {
      failure_ = e.what();
      failed_generation_ = generation_;
      try {
        c_.Exec("ROLLBACK");
      } catch (const StorageError&) {
      }
    }
    NoteCommit();  // also after a failed COMMIT: harmless, and simpler than knowing what is left
    open_ = false;
    leader_ = false;
    committing_ = false;
    ++generation_;
    changed_.notify_all();
  }
  const bool failed = failed_generation_ == mine;
  const std::string failure = failed ? failure_ : std::string();
  lock.unlock();
  if (failed) throw StorageError(failure);
}

std::unique_lock<std::mutex> GroupCommit::Exclusive() {
  ++queued_;  // an open group's leader stops waiting for more writers and commits
  // Counted before waiting for the mutex, which an application's write queue holds for as long as
  // its group is open: a writer entering after that group's flush must already see this one waits.
  ++exclusive_waiting_;
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !open_ && !committing_; });
  --exclusive_waiting_;
  --queued_;
  changed_.notify_all();  // writers held back for us wait for the lock now, not for a notice
  return lock;
}

}  // namespace crmd::storage::sqlite
