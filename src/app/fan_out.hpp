// How many trigger actions each chain has started, by the id of its root write (issue 31 #18):
// one anonymous form call fanned out by triggers to 8,420 records in 5 s (20 actions per write,
// three levels deep). Every action of a chain, at every level, counts against the one budget of
// the write that started it (triggers::kMaxActionsPerWrite).
//
// In memory, per application and server: after a restart, or on another server of the same
// database, a chain still running counts again from zero, so the bound is per process and start,
// which is what keeps one write from flooding a server. Bounded: at most kMaxChains chains are
// remembered, the least recently counted forgotten first.
//
// Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace crmd::app {

class FanOut {
 public:
  // Chains remembered at once: a chain's entry is tens of bytes.
  static constexpr std::size_t kMaxChains = 100'000;

  // Counts `n` more actions of the chain `root`: false (and nothing counted) when that would
  // take it past `budget`.
  bool Take(std::string_view root, std::int64_t n, std::int64_t budget);

 private:
  struct Chain {
    std::int64_t fired = 0;
    std::list<std::string>::iterator recent;
  };
  std::mutex mutex_;
  std::unordered_map<std::string, Chain> chains_;
  std::list<std::string> recent_;  // most recently counted first
};

}  // namespace crmd::app
