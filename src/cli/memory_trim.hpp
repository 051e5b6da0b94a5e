// Gives the memory malloc keeps after a burst back to the system, on a timer of its own.
//
// glibc keeps what a thread freed in that thread's arena: free chunks between live ones are never
// returned, and the top of each arena only past M_TRIM_THRESHOLD. After a burst (a page of query
// results per connection, a backlog of trigger actions) each arena holds its own high-water mark,
// and the next burst, on other threads and so other arenas, adds its own: the peak of the
// process is the sum. Once a second, when the process used CPU since the last look, malloc_trim
// hands the free pages back; the request path never pays for it.
//
// One per server, made by PlanServe; its thread stops when it is destroyed. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace crmd::cli {

class MemoryTrim {
 public:
  MemoryTrim();
  ~MemoryTrim();
  MemoryTrim(const MemoryTrim&) = delete;
  MemoryTrim& operator=(const MemoryTrim&) = delete;

 private:
  void Run();

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace crmd::cli
