#include "cli/memory_trim.hpp"

#include <malloc.h>
#include <time.h>

namespace crmd::cli {

namespace {

// Often enough that a burst's garbage does not wait for the next one; a trim walks the free
// chunks of every arena (well under a millisecond for crmd's tens of MiB), so once a second is
// noise beside any load that made garbage.
constexpr std::chrono::seconds kInterval{1};
// CPU the process may use in an interval and still count as having made no garbage worth a
// trim (the registry poll, the checkpointer's look, this thread).
constexpr std::chrono::milliseconds kQuietCpu{5};

std::chrono::nanoseconds ProcessCpu() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
}

}  // namespace

MemoryTrim::MemoryTrim() : thread_([this] { Run(); }) {}

MemoryTrim::~MemoryTrim() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void MemoryTrim::Run() {
  auto cpu = ProcessCpu();
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, kInterval, [this] { return stopping_; })) {
    const auto now = ProcessCpu();
    if (now - cpu < kQuietCpu) continue;
    lock.unlock();
    malloc_trim(0);
    cpu = ProcessCpu();  // the trim's own CPU is not garbage
    lock.lock();
  }
}

}  // namespace crmd::cli
