#include "storage/count_cache.hpp"

#include <cstring>
#include <type_traits>

namespace crmd::storage {

std::string CountCache::Key(const std::string& sql, const std::vector<Cell>& params) {
  std::string key = sql;
  for (const auto& cell : params) {
    // A type tag and a length prefix: no two different parameter lists give the same key.
    key.push_back('\0');
    key.push_back(static_cast<char>('0' + cell.index()));
    std::visit(
        [&key](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>) {
            key += std::to_string(v.size());
            key.push_back(':');
            key += v;
          } else if constexpr (!std::is_same_v<T, std::monostate>) {
            char bytes[sizeof(T)];
            std::memcpy(bytes, &v, sizeof(T));
            key.append(bytes, sizeof(T));
          }
        },
        cell);
  }
  return key;
}

std::optional<std::int64_t> CountCache::Find(const std::string& key, std::uint64_t generation) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.generation != generation) return std::nullopt;
  return it->second.count;
}

void CountCache::Store(std::string key, std::uint64_t generation, std::int64_t count) {
  std::lock_guard lock(mutex_);
  if (entries_.size() >= kMaxEntries) entries_.clear();
  entries_.insert_or_assign(std::move(key), Entry{generation, count});
}

}  // namespace crmd::storage
