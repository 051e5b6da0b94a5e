#include "app/write_queue.hpp"

#include <utility>
#include <vector>

#include "util/log.hpp"

namespace crmd::app {

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
  if (!queued) job.finish(storage::CommitOutcome::kFailed);
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

void WriteQueue::RequestStop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_one();
}

std::size_t WriteQueue::depth() {
  std::lock_guard lock(mutex_);
  return jobs_.size() + in_group_;
}

void WriteQueue::Loop() {
  std::vector<Job> group;
  std::vector<storage::WriteGroups::Job> runs;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      in_group_ = 0;  // the last group finished
      ready_.wait_for(lock, idle_, [&] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) {  // stopping, or idle: the next Submit() starts a thread again
        running_ = false;
        return;
      }
      while (!jobs_.empty() && group.size() < kMaxGroup) {
        group.push_back(std::move(jobs_.front()));
        jobs_.pop_front();
      }
      in_group_ = group.size();
    }
    for (auto& job : group) runs.push_back(std::move(job.run));
    const std::vector<storage::CommitOutcome> outcomes = groups_.CommitBatch(runs);
    for (std::size_t i = 0; i < group.size(); ++i) {
      try {
        group[i].finish(outcomes[i]);
      } catch (...) {
        // Out of memory for the answer: that request gets no answer, the queue goes on.
        log::Error("queued write could not be answered", {});
      }
    }
    group.clear();
    runs.clear();
  }
}

}  // namespace crmd::app
