#include "app/write_queue.hpp"

#include <utility>
#include <vector>

#include "util/log.hpp"

namespace crmd::app {

void QueuedGroup::AfterFlush(std::function<void()> action) { waiting_.emplace_back(group_.Epoch(), std::move(action)); }

void QueuedGroup::Settle() {
  auto waiting = std::move(waiting_);
  waiting_.clear();
  for (auto& [epoch, action] : waiting) {
    if (group_.Failed(epoch)) continue;
    try {
      action();
    } catch (const std::exception& e) {
      log::Error("after-flush action failed", {{"error", e.what()}});
    }
  }
}

WriteQueue::WriteQueue(storage::WriteGroups& groups, std::chrono::milliseconds idle) : groups_(groups), idle_(idle) {}

WriteQueue::~WriteQueue() { Stop(); }

void WriteQueue::Submit(Job job) {
  // Never throws: the caller has handed over its request with the job, so a job that cannot be
  // queued is finished here, as not durable.
  bool queued = false;
  try {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      if (!running_) {
        // The last thread ended idle (or there was none yet); it holds nothing any more.
        if (thread_.joinable()) thread_.join();
        thread_ = std::thread([this] { Loop(); });
        running_ = true;
      }
      jobs_.push_back(std::move(job));
      queued = true;
      if (jobs_.size() == 1) ready_.notify_one();  // the thread sleeps only on an empty queue
    }
  } catch (const std::exception& e) {
    log::Error("write queue refused a write", {{"error", e.what()}});  // no thread, no memory
  }
  if (!queued) job.finish(false);
}

void WriteQueue::Stop() {
  std::thread thread;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    thread = std::move(thread_);
  }
  ready_.notify_one();
  if (thread.joinable()) thread.join();
}

void WriteQueue::Loop() {
  std::vector<Job> group;
  // The flushes each job's writes may belong to: from the one open when it began to the one open
  // when it ended (a job's exclusive write flushes the group in between).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> epochs;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      ready_.wait_for(lock, idle_, [&] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) {  // stopping, or idle: the next Submit() starts a thread again
        running_ = false;
        return;
      }
      while (!jobs_.empty() && group.size() < kMaxGroup) {
        group.push_back(std::move(jobs_.front()));
        jobs_.pop_front();
      }
    }
    {
      auto writes = groups_.BeginWriteGroup();
      QueuedGroup queued(*writes);
      for (auto& job : group) {
        writes->FlushIfLost();  // so that this job's writes are not counted in a lost group
        const std::uint64_t first = writes->Epoch();
        try {
          job.run(queued);
        } catch (const std::exception& e) {
          // run() answers its own faults; this is a last line, so one job cannot end the queue.
          log::Error("queued write failed", {{"error", e.what()}});
        } catch (...) {
          log::Error("queued write failed", {{"error", "unknown exception"}});
        }
        epochs.emplace_back(first, writes->Epoch());
      }
      writes->Flush();
      queued.Settle();
      for (std::size_t i = 0; i < group.size(); ++i) {
        bool durable = true;
        for (auto e = epochs[i].first; e <= epochs[i].second; ++e) durable = durable && !writes->Failed(e);
        try {
          group[i].finish(durable);
        } catch (...) {
          // Out of memory for the answer: that request gets no answer, the queue goes on.
          log::Error("queued write could not be answered", {});
        }
      }
    }
    group.clear();
    epochs.clear();
  }
}

}  // namespace crmd::app
