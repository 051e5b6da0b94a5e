// A disk slower to sync than the test machine's, for tests of work that scales with syncs (a
// shutdown that synced every open store took seconds on a slow disk and milliseconds here).
// Preloaded into crmd (LD_PRELOAD): every fsync and fdatasync first sleeps SLOW_FSYNC_MS
// milliseconds (default 10), then does the real one.
#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <thread>

namespace {

using SyncFn = int (*)(int);

void Delay() {
  static const int ms = [] {
    const char* value = std::getenv("SLOW_FSYNC_MS");
    return value ? std::atoi(value) : 10;
  }();
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

SyncFn Next(const char* name) { return reinterpret_cast<SyncFn>(dlsym(RTLD_NEXT, name)); }

}  // namespace

extern "C" int fsync(int fd) {
  static const SyncFn real = Next("fsync");
  Delay();
  return real(fd);
}

extern "C" int fdatasync(int fd) {
  static const SyncFn real = Next("fdatasync");
  Delay();
  return real(fd);
}
