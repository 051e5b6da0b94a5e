#include "query/char_set.hpp"

#include <locale.h>
#include <wctype.h>

#include <algorithm>

namespace crmd::query {

namespace {

constexpr char32_t kFirstSurrogate = 0xD800;
constexpr char32_t kLastSurrogate = 0xDFFF;

locale_t CaseLocale() {
  static const locale_t locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0));
  return locale;
}

void AddCases(char32_t c, CharSet& out) {
  if (c < 0x80) {
    if (c >= 'a' && c <= 'z') out.Add(c - 'a' + 'A');
    if (c >= 'A' && c <= 'Z') out.Add(c - 'A' + 'a');
    return;
  }
  const locale_t locale = CaseLocale();
  if (!locale) return;
  auto lower = [&](char32_t v) { return static_cast<char32_t>(towlower_l(static_cast<wint_t>(v), locale)); };
  auto upper = [&](char32_t v) { return static_cast<char32_t>(towupper_l(static_cast<wint_t>(v), locale)); };
  for (char32_t v : {lower(c), upper(c), upper(lower(c)), lower(upper(c))})
    if (v <= kLastCodePoint) out.Add(v);
}

}  // namespace

void CharSet::Normalize() {
  std::vector<Range> cut;
  for (auto [lo, hi] : ranges_) {
    if (lo < kFirstSurrogate) cut.emplace_back(lo, std::min<char32_t>(hi, kFirstSurrogate - 1));
    if (hi > kLastSurrogate) cut.emplace_back(std::max<char32_t>(lo, kLastSurrogate + 1), hi);
  }
  std::sort(cut.begin(), cut.end());
  ranges_.clear();
  for (const auto& r : cut) {
    if (!ranges_.empty() && r.first <= ranges_.back().second + 1) ranges_.back().second = std::max(ranges_.back().second, r.second);
    else ranges_.push_back(r);
  }
}

CharSet CharSet::Complement() const {
  CharSet out;
  char32_t next = 0;
  for (auto [lo, hi] : ranges_) {
    if (lo > next) out.Add(next, lo - 1);
    next = hi + 1;
  }
  if (next <= kLastCodePoint) out.Add(next, kLastCodePoint);
  out.Normalize();
  return out;
}

bool CharSet::Contains(char32_t c) const {
  for (auto [lo, hi] : ranges_)
    if (c >= lo && c <= hi) return true;
  return false;
}

std::optional<char32_t> CharSet::Single() const {
  if (ranges_.size() == 1 && ranges_[0].first == ranges_[0].second) return ranges_[0].first;
  return std::nullopt;
}

void FoldCase(CharSet& set, std::size_t max_range) {
  CharSet cases;
  for (auto [lo, hi] : set.ranges())
    if (hi - lo < max_range)
      for (char32_t c = lo; c <= hi; ++c) AddCases(c, cases);
  set.AddAll(cases);
  set.Normalize();
}

bool IsPerlClass(char name) {
  return name == 'd' || name == 'D' || name == 's' || name == 'S' || name == 'w' || name == 'W';
}

CharSet PerlClass(char name) {
  CharSet set;
  switch (name | 0x20) {
    case 'd': set.Add('0', '9'); break;
    case 's': set.Add('\t', '\n'); set.Add('\f', '\r'); set.Add(' '); break;
    default: set.Add('0', '9'); set.Add('A', 'Z'); set.Add('_'); set.Add('a', 'z'); break;  // w
  }
  set.Normalize();
  return name >= 'A' && name <= 'Z' ? set.Complement() : set;
}

std::optional<CharSet> PosixClass(std::string_view name) {
  CharSet set;
  if (name == "alnum") { set.Add('0', '9'); set.Add('A', 'Z'); set.Add('a', 'z'); }
  else if (name == "alpha") { set.Add('A', 'Z'); set.Add('a', 'z'); }
  else if (name == "ascii") { set.Add(0, 0x7f); }
  else if (name == "blank") { set.Add('\t'); set.Add(' '); }
  else if (name == "cntrl") { set.Add(0, 0x1f); set.Add(0x7f); }
  else if (name == "digit") { set.Add('0', '9'); }
  else if (name == "graph") { set.Add('!', '~'); }
  else if (name == "lower") { set.Add('a', 'z'); }
  else if (name == "print") { set.Add(' ', '~'); }
  else if (name == "punct") { set.Add('!', '/'); set.Add(':', '@'); set.Add('[', '`'); set.Add('{', '~'); }
  else if (name == "space") { set.Add('\t', '\r'); set.Add(' '); }
  else if (name == "upper") { set.Add('A', 'Z'); }
  else if (name == "word") { set.Add('0', '9'); set.Add('A', 'Z'); set.Add('_'); set.Add('a', 'z'); }
  else if (name == "xdigit") { set.Add('0', '9'); set.Add('A', 'F'); set.Add('a', 'f'); }
  else return std::nullopt;
  set.Normalize();
  return set;
}

}  // namespace crmd::query
