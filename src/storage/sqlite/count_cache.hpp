// Answers to `count` queries, kept until the application's next commit.
//
// A dashboard asks the same counts over and over, and each costs a walk over every matching index
// entry. An answer is stored with the commit count read *before* its read started, and served only
// while no commit has happened since: any committed write (to any class) retires every answer, so a
// count is never older than the writes acknowledged before it was asked.
// Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "storage/row.hpp"

namespace crmd::storage::sqlite {

class CountCache {
 public:
  // Bounded: when full, it starts over (statement shapes and values are the client's to vary).
  static constexpr std::size_t kMaxEntries = 4096;

  // The key of a count: its SQL and every bound value, with their types.
  static std::string Key(const std::string& sql, const std::vector<Cell>& params);

  std::optional<std::int64_t> Find(const std::string& key, std::uint64_t commits);
  void Store(std::string key, std::uint64_t commits, std::int64_t count);

 private:
  struct Entry {
    std::uint64_t commits;
    std::int64_t count;
  };
  std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace crmd::storage::sqlite
