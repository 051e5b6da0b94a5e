// An application's write queue: one thread that runs the application's record writes one after
// another and makes each run of them durable with one COMMIT (a storage::WriteGroup).
//
// Why not a pool of writer threads meeting in a commit group: every write then put a thread to
// sleep three times (the hand-off, the wait for the group's fsync, the way back), about ten context
// switches per create, and those switches were most of a create's CPU. Here a write is a job in a
// queue: the thread that takes it never waits for it, and the jobs that arrive during one fsync
// are the next group.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "storage/write_group.hpp"

namespace crmd::app {

class WriteQueue {
 public:
  struct Job {
    // Runs on the queue's thread inside the write group, which its outermost write units begin
    // in (Context::queued); their Commit() returns at once. Answers its own faults (an exception
    // is logged and the job finished as it stands).
    std::function<void(storage::WriteGroup& group)> run;
    // Then, once the group's last COMMIT returned: the worst outcome of those holding the job's
    // writes (WriteGroups::CommitBatch). Called on the queue's thread; must not block.
    std::function<void(storage::CommitOutcome)> finish;
  };

  // Jobs run per group at most: bounds the wait of the last one in a long queue.
  static constexpr std::size_t kMaxGroup = 128;
  // A queue's thread ends after this long without a job and starts again with the next: a server
  // of many applications keeps threads only for the ones being written to.
  // A few seconds: starting a thread costs tens of microseconds, and a thousand applications
  // written to within the last minute would otherwise keep a thousand threads.
  static constexpr std::chrono::milliseconds kIdle{5'000};

  explicit WriteQueue(storage::WriteGroups& groups, std::chrono::milliseconds idle = kIdle);
  ~WriteQueue();  // Stop()

  // Never throws; a job that cannot be queued (stopped, or no thread could be started) is finished
  // at once with durable = false and never runs.
  void Submit(Job job);
  // Runs and finishes every job already submitted, then ends the thread; later jobs are refused.
  void Stop();
  // Stop() without the wait: refuses later jobs and lets the thread end once it ran the queued
  // ones. Stopping many queues, ask each first and wait for each after, so that their threads
  // end side by side rather than one after another (issue 33).
  void RequestStop();

  // Jobs submitted and not finished yet: waiting, or in the group running now (/metrics).
  std::size_t depth();

 private:
  void Loop();

  storage::WriteGroups& groups_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Job> jobs_;
  bool stopping_ = false;
  bool running_ = false;  // a thread runs Loop(); guarded by mutex_, like thread_
  std::size_t in_group_ = 0;  // jobs taken into the running group, until it finished; mutex_
  const std::chrono::milliseconds idle_;
  std::thread thread_;
};

}  // namespace crmd::app
