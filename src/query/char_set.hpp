// Sets of Unicode code points, as the classes of a `$regex` mean them (query/portable_regex.hpp):
// ranges that are sorted, disjoint and not adjacent once Normalize()d, with the surrogates left
// out (no text holds one). Also the classes RE2 names (`\d`, `[:alpha:]`, ...) as such sets, and
// the case folding of the `i` flag.
//
// Values; not thread-safe to share while one is changed.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace crmd::query {

inline constexpr char32_t kLastCodePoint = 0x10FFFF;

class CharSet {
 public:
  using Range = std::pair<char32_t, char32_t>;

  void Add(char32_t lo, char32_t hi) { ranges_.emplace_back(lo, hi); }
  void Add(char32_t c) { Add(c, c); }
  void AddAll(const CharSet& other) { ranges_.insert(ranges_.end(), other.ranges_.begin(), other.ranges_.end()); }
  // Sorts and merges the ranges, and drops the surrogates.
  void Normalize();

  // The rest of the code points (of a normalized set).
  CharSet Complement() const;
  bool Empty() const { return ranges_.empty(); }
  bool Contains(char32_t c) const;
  bool IsEverything() const { return Complement().Empty(); }
  // The one code point the set holds, if it holds one only.
  std::optional<char32_t> Single() const;
  const std::vector<Range>& ranges() const { return ranges_; }

 private:
  std::vector<Range> ranges_;
};

// The `i` flag on a normalized set: each character of its ranges of at most `max_range`
// characters gets its other cases (ASCII letters; beyond ASCII the C.UTF-8 locale's simple case
// mapping, or none when the system lacks that locale). Wider ranges stay as they are.
void FoldCase(CharSet& set, std::size_t max_range);

// `\d`, `\s`, `\w` and their negations (`name` is the letter), as RE2 defines them (ASCII).
bool IsPerlClass(char name);
CharSet PerlClass(char name);
// `[:name:]` as RE2 defines it (ASCII); nullopt for a name RE2 does not know.
std::optional<CharSet> PosixClass(std::string_view name);

}  // namespace crmd::query
