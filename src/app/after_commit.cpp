#include "app/after_commit.hpp"

#include "util/log.hpp"

namespace crmd::app {

AfterCommitRunner::AfterCommitRunner() : thread_([this] { Loop(); }) {}

AfterCommitRunner::~AfterCommitRunner() { Stop(); }

void AfterCommitRunner::Post(std::vector<Action> actions) {
  if (actions.empty()) return;
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      for (auto& a : actions) actions_.push_back(std::move(a));
      posted_ += actions.size();
      changed_.notify_all();
      return;
    }
  }
  for (auto& a : actions) RunOne(a);
}

void AfterCommitRunner::Drain() {
  std::unique_lock lock(mutex_);
  const std::uint64_t target = posted_;
  changed_.wait(lock, [&] { return done_ >= target; });
}

void AfterCommitRunner::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void AfterCommitRunner::RunOne(Action& action) {
  try {
    action();
  } catch (const std::exception& e) {
    log::Error("after-commit action failed", {{"error", e.what()}});
  } catch (...) {
    log::Error("after-commit action failed", {{"error", "unknown exception"}});
  }
}

void AfterCommitRunner::Loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !actions_.empty(); });
    if (actions_.empty()) return;  // stopping, and everything ran
    Action action = std::move(actions_.front());
    actions_.pop_front();
    lock.unlock();
    RunOne(action);
    action = nullptr;  // what it holds goes before the count says it ran
    lock.lock();
    ++done_;
    changed_.notify_all();
  }
}

}  // namespace crmd::app
