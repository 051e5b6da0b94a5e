// Answers to `count` queries, kept while what they counted is unchanged.
//
// A dashboard asks the same counts over and over, and each costs a walk over every matching index
// entry. An answer is stored with a generation of what it counted, read with it or before its read
// started, and served only while the generation is unchanged, so a count is never older than the
// writes acknowledged before it was asked. SQLite's store counts its own commits (any commit
// retires every answer: one process writes the file); PostgreSQL's reads a per-class generation
// that every write transaction moves in its own commit, so that the writes of every server on the
// database retire the answers of all of them.
// Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "storage/row.hpp"

namespace crmd::storage {

class CountCache {
 public:
  // Bounded: when full, it starts over (statement shapes and values are the client's to vary).
  static constexpr std::size_t kMaxEntries = 4096;

  // The key of a count: its SQL and every bound value, with their types.
  static std::string Key(const std::string& sql, const std::vector<Cell>& params);

  std::optional<std::int64_t> Find(const std::string& key, std::uint64_t generation);
  void Store(std::string key, std::uint64_t generation, std::int64_t count);

 private:
  struct Entry {
    std::uint64_t generation;
    std::int64_t count;
  };
  std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace crmd::storage
