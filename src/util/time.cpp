#include "util/time.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>

namespace crmd::timeutil {

namespace {

// Howard Hinnant's days_from_civil / civil_from_days: proleptic Gregorian, no time zone database.
std::int64_t DaysFromCivil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void CivilFromDays(std::int64_t z, std::int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
}

bool Digits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  out = v;
  return true;
}

// 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: beyond them the text form stops sorting
// in time order.
constexpr std::int64_t kMinMillis = -62167219200000;
constexpr std::int64_t kMaxMillis = 253402300799999;

bool IsLeap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

}  // namespace

namespace {
// The settable clock: the system's time plus an offset, or a fixed time while one is set.
std::atomic<std::int64_t> clock_offset{0};
std::atomic<bool> clock_fixed{false};
std::atomic<std::int64_t> clock_fixed_at{0};
}  // namespace

std::int64_t NowMillis() {
  using namespace std::chrono;
  if (clock_fixed.load(std::memory_order_relaxed)) return clock_fixed_at.load(std::memory_order_relaxed);
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count() +
         clock_offset.load(std::memory_order_relaxed);
}

void SetClockOffset(std::int64_t millis) { clock_offset.store(millis, std::memory_order_relaxed); }

void SetClock(std::optional<std::int64_t> millis) {
  if (millis) clock_fixed_at.store(*millis, std::memory_order_relaxed);
  clock_fixed.store(millis.has_value(), std::memory_order_relaxed);
}

std::string FormatIso(std::int64_t millis) {
  std::int64_t days = millis / 86400000;
  std::int64_t rem = millis % 86400000;
  if (rem < 0) {
    rem += 86400000;
    days -= 1;
  }
  std::int64_t y;
  unsigned m, d;
  CivilFromDays(days, y, m, d);
  const int hh = static_cast<int>(rem / 3600000), mm = static_cast<int>(rem / 60000 % 60),
            ss = static_cast<int>(rem / 1000 % 60), ms = static_cast<int>(rem % 1000);
  if (y < 0 || y > 9999) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02d:%02d:%02d.%03dZ", static_cast<long long>(y), m,
                  d, hh, mm, ss, ms);
    return buf;
  }
  // Every record and every access-log line carries one: digits by hand, not through printf.
  std::string out = "0000-00-00T00:00:00.000Z";
  auto put = [&out](std::size_t at, std::size_t width, std::int64_t value) {
    for (std::size_t i = width; i-- > 0; value /= 10) out[at + i] = static_cast<char>('0' + value % 10);
  };
  put(0, 4, y);
  put(5, 2, m);
  put(8, 2, d);
  put(11, 2, hh);
  put(14, 2, mm);
  put(17, 2, ss);
  put(20, 3, ms);
  return out;
}

std::optional<std::int64_t> ParseIso(std::string_view s) {
  int y, mo, d, hh = 0, mi = 0, ss = 0, ms = 0;
  if (!Digits(s, 0, 4, y) || s.size() < 10 || s[4] != '-' || !Digits(s, 5, 2, mo) || s[7] != '-' ||
      !Digits(s, 8, 2, d))
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > DaysInMonth(y, mo)) return std::nullopt;
  std::size_t pos = 10;
  int offset_minutes = 0;
  if (pos < s.size()) {
    if (s[pos] != 'T' && s[pos] != ' ') return std::nullopt;
    if (!Digits(s, pos + 1, 2, hh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !Digits(s, pos + 4, 2, mi))
      return std::nullopt;
    pos += 6;
    if (pos < s.size() && s[pos] == ':') {
      if (!Digits(s, pos + 1, 2, ss)) return std::nullopt;
      pos += 3;
      if (pos < s.size() && s[pos] == '.') {
        ++pos;
        std::size_t start = pos;
        int scale = 100;
        while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
          ms += (s[pos] - '0') * scale;
          scale /= 10;
          ++pos;
        }
        if (pos == start) return std::nullopt;
      }
    }
    if (hh > 23 || mi > 59 || ss > 60) return std::nullopt;
    if (pos < s.size()) {
      if (s[pos] == 'Z' && pos + 1 == s.size()) {
        ++pos;
      } else if ((s[pos] == '+' || s[pos] == '-') && pos + 6 == s.size() && s[pos + 3] == ':') {
        int oh, om;
        if (!Digits(s, pos + 1, 2, oh) || !Digits(s, pos + 4, 2, om) || oh > 23 || om > 59)
          return std::nullopt;
        offset_minutes = (oh * 60 + om) * (s[pos] == '+' ? 1 : -1);
        pos += 6;
      } else {
        return std::nullopt;
      }
    }
  }
  if (pos != s.size()) return std::nullopt;
  const std::int64_t days = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  const std::int64_t millis = ((days * 24 + hh) * 60 + mi - offset_minutes) * 60000 +
                              static_cast<std::int64_t>(ss) * 1000 + ms;
  if (millis < kMinMillis || millis > kMaxMillis) return std::nullopt;
  return millis;
}

std::optional<std::string> NormalizeIso(std::string_view text) {
  auto millis = ParseIso(text);
  if (!millis) return std::nullopt;
  return FormatIso(*millis);
}

}  // namespace crmd::timeutil
