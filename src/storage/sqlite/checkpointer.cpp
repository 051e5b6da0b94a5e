#include "storage/sqlite/checkpointer.hpp"

#include <exception>
#include <system_error>
#include <utility>

#include "util/log.hpp"

namespace crmd::storage::sqlite {

Checkpointer::Checkpointer(std::string path, bool sync_full, Limits limits)
    : path_(std::move(path)), sync_full_(sync_full), limits_(limits) {}

Checkpointer::~Checkpointer() {
  WaitIdle();
  if (thread_.joinable()) thread_.join();
}

void Checkpointer::AfterCommit(Connection& writer, int frames) {
  std::unique_lock lock(mutex_);
  if (frames < last_frames_) backfilled_ = 0;  // the log started over
  last_frames_ = frames;
  if (frames < limits_.start) return;
  const bool whole = frames >= limits_.whole;
  if (running_) {
    if (!whole) return;
    idle_.wait(lock, [&] { return !running_; });  // the passes fell behind: the writer waits
  } else if (!whole && frames - backfilled_ > limits_.tail) {
    StartPass();
    return;
  }
  lock.unlock();
  int copied = -1;
  try {
    copied = writer.Checkpoint();
  } catch (const std::exception& e) {
    // The commit itself is done and durable; the log stays longer until a checkpoint succeeds.
    log::Error("checkpoint failed", {{"store", path_}, {"error", e.what()}});
  }
  lock.lock();
  if (copied >= 0) backfilled_ = copied;
  ++(whole ? stats_.whole : stats_.tails);
}

void Checkpointer::StartPass() {
  if (thread_.joinable()) thread_.join();  // the last pass has ended: running_ is false
  running_ = true;
  try {
    thread_ = std::thread([this] { Pass(); });
  } catch (const std::system_error& e) {
    // No thread: the log grows until the writer copies it whole.
    running_ = false;
    log::Error("checkpoint thread could not start", {{"store", path_}, {"error", e.what()}});
  }
}

void Checkpointer::Pass() {
  int copied = -1;
  try {
    if (!own_) own_ = std::make_unique<Connection>(path_, sync_full_);
    copied = own_->Checkpoint();
  } catch (const std::exception& e) {
    log::Error("checkpoint failed", {{"store", path_}, {"error", e.what()}});
  }
  std::lock_guard lock(mutex_);
  if (copied >= 0) backfilled_ = copied;
  ++stats_.passes;
  running_ = false;
  idle_.notify_all();
}

void Checkpointer::WaitIdle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return !running_; });
}

Checkpointer::Stats Checkpointer::stats() {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace crmd::storage::sqlite
