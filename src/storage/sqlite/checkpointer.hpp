// Copies a store's write-ahead log back into its database file (SQLite's checkpoint) on a thread of
// its own, so that the writer's thread, which every write of the application waits for, does not.
//
// SQLite's own automatic checkpoint runs inside the COMMIT that takes the log past a size: 15% of
// the writer thread's time in the create bench, and a 25-35 ms wait for the unlucky write. Here the
// writer's commits only report the log's size. A pass on the checkpointer's thread (a PASSIVE
// checkpoint on a connection of its own) copies what the log holds when it starts, while the writer
// goes on appending. SQLite starts the log over only at a write that begins with all of it copied
// (and no reader still on an older snapshot), so when a pass leaves just a short tail, the writer
// copies that tail itself, and its next write starts the log over. A log too long for the passes to
// catch up with (they copy slower than the writer appends, or a reader holds it) is copied whole by
// the writer, as SQLite would.
//
// SQLite syncs the database file only at a checkpoint that reaches the log's end, which a pass
// under writes never does: the thousands of pages a pass copied would then wait, dirty, for the
// writer's tail copy to sync them (median 45 ms of the writer's time, up to 270 ms, every pass,
// measured on the product base's updates: the p99 of every write). So a pass syncs the file itself
// after its first copy, and copies again (unsynced) what was appended meanwhile while that is more
// than `rest`: the writer's tail is short and its sync flushes only the last copies' pages. A sync
// after every copy was tried: hot pages went to disk once per copy (+12% CPU per product-base
// create, five pairs).
//
// Thread-safe: AfterCommit() is called by the writer connection's commits, one at a time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "storage/sqlite/connection.hpp"

namespace crmd::storage::sqlite {

class Checkpointer {
 public:
  struct Limits {
    int start = 4000;   // log pages before a pass starts: SQLite's autocheckpoint, at 4x its default
    int tail = 1000;    // pages left over by a pass that the writer copies itself
    // Log pages (31.3 MiB) past which the writer copies all of it itself, after the running pass:
    // a writer that appends faster than passes copy (no fsync per commit) would otherwise never
    // leave a tail short enough, and the log would only grow.
    int whole = 8000;
    // Log pages a pass may leave behind; more, and it copies again (at most kRounds times).
    int rest = 100;
  };
  struct Stats {
    std::uint64_t passes = 0;  // background passes run
    std::uint64_t tails = 0;   // checkpoints the writer ran on a short tail
    std::uint64_t whole = 0;   // checkpoints the writer ran on a log past Limits::whole
    std::uint64_t synced = 0;  // syncs of the database file by passes (one each, after its first copy)
    std::uint64_t rounds = 0;  // copies made by passes (a pass copies again what came during the one before)
  };
  // The checkpointer's thread ends after this long without a pass, and starts again with the next.
  static constexpr std::chrono::seconds kIdle{60};
  // Copies of one pass: each copies what the writer appended during the one before (the first
  // one's sync included), a fraction of it, so a few leave a short tail; a copy that gains nothing
  // ends the pass.
  static constexpr int kRounds = 4;

  Checkpointer(std::string path, bool sync_full, Limits limits);
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;
  ~Checkpointer();  // waits for a running pass

  // After a commit on `writer` left `frames` pages in the log (called from its WAL hook). Never
  // throws: the commit is done, and a checkpoint that fails is logged and tried again later.
  void AfterCommit(Connection& writer, int frames) noexcept;
  // Waits until no pass is wanted or running: for tests, which must not guess it from a sleep.
  void WaitIdle();
  Stats stats();

 private:
  void RequestPass();  // mutex_ held
  void Work();
  // The log pages a checkpoint left copied, or nothing when it did not run (another one ran, or it
  // failed).
  std::optional<int> Run(Connection& c) noexcept;
  // The copies of one pass on the checkpointer's own connection, the first synced: what Run()
  // returns for the last one. Called without mutex_.
  std::optional<int> Pass(Connection& c) noexcept;
  void Note(int copied);  // after a checkpoint copied the log up to `copied`; mutex_ held

  const std::string path_;
  const bool sync_full_;
  const Limits limits_;
  std::mutex mutex_;
  std::condition_variable wake_;  // a pass is wanted, or the checkpointer stops
  std::condition_variable idle_;  // a pass ended
  bool wanted_ = false;           // a pass is wanted or running
  bool worker_ = false;           // thread_ runs Work()
  bool stopping_ = false;
  int backfilled_ = 0;            // log pages copied so far, as last known
  int last_frames_ = 0;           // the log's size at the last commit: smaller means it started over
  Stats stats_;
  std::unique_ptr<Connection> own_;  // the passes' connection, opened by the first
  std::thread thread_;
};

}  // namespace crmd::storage::sqlite
