#include "app/write_queue.hpp"

#include <vector>

namespace crmd::app {

WriteQueue::WriteQueue(storage::Database& db) : db_(db), thread_([this] { Loop(); }) {}

WriteQueue::~WriteQueue() { Stop(); }

void WriteQueue::Submit(Job job) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      jobs_.push_back(std::move(job));
      if (jobs_.size() == 1) ready_.notify_one();  // the thread sleeps only on an empty queue
      return;
    }
  }
  job.finish(false);
}

void WriteQueue::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void WriteQueue::Loop() {
  std::vector<Job> group;
  std::vector<std::uint64_t> epochs;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, and nothing left
      while (!jobs_.empty() && group.size() < kMaxGroup) {
        group.push_back(std::move(jobs_.front()));
        jobs_.pop_front();
      }
    }
    {
      auto writes = db_.BeginWriteGroup();
      for (auto& job : group) {
        job.run();
        epochs.push_back(writes->Epoch());
      }
      writes->Flush();
      for (std::size_t i = 0; i < group.size(); ++i) group[i].finish(!writes->Failed(epochs[i]));
    }
    group.clear();
    epochs.clear();
  }
}

}  // namespace crmd::app
