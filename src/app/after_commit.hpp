// Runs what committed writes leave to do afterwards (a mail, later trigger activations): on a
// thread of its own, one action at a time, in the order they were handed over.
//
// Why a thread of its own: an action runs once its write is durable, which for a write queue's
// write is after the queue's flush, on the queue's thread; an action that writes would then wait
// for the queue that runs it. Here it waits for nobody but the store.
//
// Thread-safe. An action that throws is logged and the next one runs.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace crmd::app {

class AfterCommitRunner {
 public:
  using Action = std::function<void()>;

  AfterCommitRunner();
  ~AfterCommitRunner();  // Stop()
  AfterCommitRunner(const AfterCommitRunner&) = delete;
  AfterCommitRunner& operator=(const AfterCommitRunner&) = delete;

  // Never throws. After Stop() the actions run at once, on the caller's thread: nothing is lost
  // at shutdown, when the write queues drain after this runner may have stopped.
  void Post(std::vector<Action> actions);
  // Returns once every action posted before the call has run: for tests and shutdown.
  void Drain();
  // Runs what was posted, then ends the thread.
  void Stop();

 private:
  void Loop();
  static void RunOne(Action& action);

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Action> actions_;
  std::uint64_t posted_ = 0, done_ = 0;  // actions handed over and run, guarded by mutex_
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace crmd::app
