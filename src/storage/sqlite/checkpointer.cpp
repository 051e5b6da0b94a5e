#include "storage/sqlite/checkpointer.hpp"

#include <exception>
#include <utility>

#include "util/log.hpp"

namespace crmd::storage::sqlite {

namespace {
// Logging allocates; nothing here may throw (the callers are SQLite's hook and a thread's loop).
void LogFailure(const std::string& path, const char* what) noexcept {
  try {
    log::Error("checkpoint failed", {{"store", path}, {"error", what}});
  } catch (...) {
  }
}
}  // namespace

Checkpointer::Checkpointer(std::string path, bool sync_full, Limits limits)
    : path_(std::move(path)), sync_full_(sync_full), limits_(limits) {}

Checkpointer::~Checkpointer() {
  {
    std::unique_lock lock(mutex_);
    stopping_ = true;
    wake_.notify_all();
    idle_.wait(lock, [&] { return !wanted_; });
  }
  if (thread_.joinable()) thread_.join();
}

void Checkpointer::AfterCommit(Connection& writer, int frames) noexcept {
  std::unique_lock lock(mutex_);
  if (frames < last_frames_) backfilled_ = 0;  // the log started over
  last_frames_ = frames;
  if (frames < limits_.start) return;
  const bool whole = frames >= limits_.whole;
  if (wanted_) {
    if (!whole) return;
    idle_.wait(lock, [&] { return !wanted_; });  // the passes fell behind: the writer waits for this one
  } else if (!whole && frames - backfilled_ > limits_.tail) {
    RequestPass();
    if (wanted_) return;
    // No thread could start: the writer copies the log itself, as SQLite would have.
  }
  lock.unlock();
  auto result = Run(writer);
  lock.lock();
  if (!result) return;
  ++(whole ? stats_.whole : stats_.tails);
  Note(*result);
}

void Checkpointer::RequestPass() {
  wanted_ = true;
  if (!worker_) {
    // The last thread ended idle (it cleared worker_ holding the mutex, then only returned).
    if (thread_.joinable()) thread_.join();
    try {
      thread_ = std::thread([this] { Work(); });
      worker_ = true;
    } catch (...) {
      wanted_ = false;
      return;
    }
  }
  wake_.notify_one();
}

void Checkpointer::Work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait_for(lock, kIdle, [&] { return wanted_ || stopping_; });
    if (!wanted_) {  // stopping, or idle: the next pass starts a thread again
      worker_ = false;
      return;
    }
    lock.unlock();
    std::optional<int> result;
    try {
      if (!own_) own_ = std::make_unique<Connection>(path_, sync_full_);
    } catch (const std::exception& e) {
      LogFailure(path_, e.what());
    }
    if (own_) result = Pass(*own_);
    lock.lock();
    ++stats_.passes;
    if (result) Note(*result);
    wanted_ = false;
    idle_.notify_all();
  }
}

std::optional<int> Checkpointer::Run(Connection& c) noexcept {
  try {
    return c.Checkpoint();
  } catch (const std::exception& e) {
    // The commits are done and durable; the log only stays longer until a checkpoint succeeds.
    LogFailure(path_, e.what());
  } catch (...) {
    LogFailure(path_, "unknown exception");
  }
  return std::nullopt;
}

std::optional<int> Checkpointer::Pass(Connection& c) noexcept {
  std::optional<int> copied;
  for (int round = 0; round < kRounds; ++round) {
    const std::optional<int> now = Run(c);
    if (!now) break;
    const bool gained = !copied || *now > *copied;
    copied = now;
    if (!gained) break;  // a reader's snapshot holds the rest (this copy counts as no round)
    if (round == 0) {
      try {
        c.SyncDatabaseFile();
      } catch (const std::exception& e) {
        LogFailure(path_, e.what());  // the writer's tail copy syncs it, as it did before
        break;
      }
    }
    std::lock_guard lock(mutex_);
    ++stats_.rounds;
    if (round == 0) ++stats_.synced;
    if (stopping_ || last_frames_ - *copied <= limits_.rest) break;
  }
  return copied;
}

void Checkpointer::Note(int copied) {
  // All of the log as the writer last reported it: the next write starts it over (unless a reader
  // still holds it, and then the next pass finds little to copy), so nothing of it counts as copied.
  // Less: a pass that ran during writes, whose tail the writer copies next.
  backfilled_ = copied < last_frames_ ? copied : 0;
}

void Checkpointer::WaitIdle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return !wanted_; });
}

Checkpointer::Stats Checkpointer::stats() {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace crmd::storage::sqlite
