// The threads operator functions run on, shared fairly between applications (issue 31 #4c, #4d).
//
// A function is the operator's code, called by anyone who knows the application id. Before this
// pool, each call held one of the server's writer threads for as long as it ran, so 16 anonymous
// calls of one application held them all and another tenant's login waited 54 s. Here:
//   - one application runs at most `per_app` calls at once, however they came: direct calls
//     (Submit), trigger actions and MCP tools (TryEnter, on their own threads);
//   - direct calls wait in their application's queue without holding any thread, and the
//     applications take turns for the pool's threads;
//   - a queue holds at most `waiting_per_app` calls: beyond, Submit refuses (the caller answers
//     429), so a flood costs a bounded amount of memory;
//   - the pool's threads run at a lower priority than the network and writer threads, so a
//     busy function never takes a core from another tenant's requests.
// The time a call may run is the function's own limit (functions::LuaLimits::time).
//
// Thread-safe. Stop() lets the running calls finish and drops the waiting ones unrun.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace crmd::app {

class FunctionPool {
 public:
  struct Options {
    int threads = 4;       // pool threads, for every application's direct calls
    int per_app = 2;       // calls of one application running at once (`--function-threads-per-app`)
    // Direct calls of one application waiting for a slot: a second's worth of short calls.
    std::size_t waiting_per_app = 256;
  };

  // A running call's hold on one of its application's slots; gives it back when destroyed.
  class Slot {
   public:
    Slot(FunctionPool* pool, std::string app_id) : pool_(pool), app_id_(std::move(app_id)) {}
    Slot(Slot&& other) noexcept : pool_(other.pool_), app_id_(std::move(other.app_id_)) { other.pool_ = nullptr; }
    Slot& operator=(Slot&& other) noexcept {
      if (this != &other) {
        Release();
        pool_ = other.pool_;
        app_id_ = std::move(other.app_id_);
        other.pool_ = nullptr;
      }
      return *this;
    }
    Slot(const Slot&) = delete;
    ~Slot() { Release(); }

   private:
    void Release();
    FunctionPool* pool_;
    std::string app_id_;
  };

  explicit FunctionPool(Options options);
  ~FunctionPool();  // Stop()
  FunctionPool(const FunctionPool&) = delete;
  FunctionPool& operator=(const FunctionPool&) = delete;

  // Queues `run` to run on a pool thread while it holds a slot of `app_id`. False, and nothing
  // queued, when the application's queue is full or the pool stopped.
  bool Submit(const std::string& app_id, std::function<void()> run);
  // A slot of `app_id` for a call that runs on the caller's own thread; nullopt when the
  // application's calls hold them all.
  std::optional<Slot> TryEnter(const std::string& app_id);
  void Stop();

  const Options& options() const { return options_; }
  // For tests and diagnosis: calls of `app_id` running and waiting now.
  int running(const std::string& app_id);
  std::size_t waiting(const std::string& app_id);

 private:
  struct Lane {
    int running = 0;
    std::deque<std::function<void()>> waiting;
  };
  void Loop();
  void Leave(const std::string& app_id);
  // The next waiting call of an application with a free slot, in turns; mutex_ held.
  std::optional<std::pair<std::string, std::function<void()>>> Next();

  Options options_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::map<std::string, Lane, std::less<>> lanes_;  // applications with calls running or waiting
  std::deque<std::string> turns_;  // applications with waiting calls, in the order they get a thread
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace crmd::app
