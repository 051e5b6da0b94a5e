// Jobs queued by application and taken in turns: one application at a time per thread, each
// application's jobs in their order, the applications round-robin. So one application's slow
// actions (a webhook to a receiver that never answers) occupy at most one of the runner's
// threads, and the others go on serving every other application.
//
// Invariant: an application is in `turns_` exactly when it has jobs and no thread runs one of
// them. Not thread-safe: the runner's mutex guards it.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

namespace crmd::triggers {

template <typename Job>  // Job has `std::string app_id`
class FairQueue {
 public:
  void Push(Job job) {
    const std::string app = job.app_id;
    auto& queue = jobs_[app];
    const bool was_empty = queue.empty();
    queue.push_back(std::move(job));
    ++size_;
    if (was_empty && !running_.contains(app)) turns_.push_back(app);
  }

  // The next job of the next application whose turn it is and that no thread is running; that
  // application then counts as running until Done().
  std::optional<Job> Take() {
    if (turns_.empty()) return std::nullopt;
    const std::string app = std::move(turns_.front());
    turns_.pop_front();
    auto it = jobs_.find(app);
    Job job = std::move(it->second.front());
    it->second.pop_front();
    --size_;
    running_.insert(app);
    return job;
  }

  // The job Take() gave for `app` is over: the application's next job, if any, waits its turn.
  void Done(const std::string& app) {
    running_.erase(app);
    auto it = jobs_.find(app);
    if (it == jobs_.end()) return;
    if (it->second.empty()) jobs_.erase(it);
    else turns_.push_back(app);
  }

  std::size_t size() const { return size_; }

 private:
  std::map<std::string, std::deque<Job>, std::less<>> jobs_;
  std::deque<std::string> turns_;
  std::set<std::string, std::less<>> running_;
  std::size_t size_ = 0;
};

}  // namespace crmd::triggers
