#include "util/json.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "util/errors.hpp"

namespace crmd {

namespace {

Result<json::value> Parse(std::string_view text, json::storage_ptr storage, bool* too_deep) {
  json::parse_options options;
  options.max_depth = kMaxJsonDepth;
  options.allow_invalid_utf8 = false;
  options.allow_comments = false;
  options.allow_trailing_commas = false;
  boost::system::error_code ec;
  json::value v = json::parse(text, ec, std::move(storage), options);
  if (too_deep) *too_deep = ec == json::error::too_deep;
  if (ec) return errors::InvalidJson(ec.message());
  return v;
}

}  // namespace

Result<json::value> ParseJson(std::string_view text, bool* too_deep) { return Parse(text, {}, too_deep); }

Result<json::value> ParseJson(std::string_view text, json::storage_ptr storage) {
  return Parse(text, std::move(storage), nullptr);
}

std::string FormatNumber(double d) {
  if (!std::isfinite(d)) return "null";  // JSON has no NaN or Infinity; JSON.stringify writes null
  if (d == 0) return "0";
  // ECMAScript Number::toString: the shortest round-trip digits, placed by the decimal exponent n
  // (value = 0.digits * 10^n): plain notation for -6 < n <= 21, exponent notation otherwise.
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, std::fabs(d), std::chars_format::scientific);
  std::string_view sci(buf, static_cast<std::size_t>(end - buf));
  const auto e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e))
    if (c != '.') digits.push_back(c);
  int exponent = 0;
  std::from_chars(sci.data() + e + 1 + (sci[e + 1] == '+'), sci.data() + sci.size(), exponent);
  const int k = static_cast<int>(digits.size());
  const int n = exponent + 1;
  std::string out = d < 0 ? "-" : "";
  if (k <= n && n <= 21) {
    out += digits + std::string(static_cast<std::size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out += digits.substr(0, static_cast<std::size_t>(n)) + "." + digits.substr(static_cast<std::size_t>(n));
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-n), '0');
    out += digits;
  } else {
    out += digits.front();
    if (k > 1) {
      out += '.';
      out.append(digits, 1);
    }
    out += n - 1 >= 0 ? "e+" : "e-";
    out += std::to_string(std::abs(n - 1));
  }
  return out;
}

namespace {

// True when one of the 8 bytes in `v` needs escaping in a JSON string: below 0x20, '"' or '\\'.
// (Classic SWAR: a borrow out of a byte marks it; bytes from 0x80 up never match.)
bool WordNeedsEscape(std::uint64_t v) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
  auto has_zero = [](std::uint64_t x) { return (x - kOnes) & ~x & kHigh; };
  const std::uint64_t below_space = (v - 0x20 * kOnes) & ~v & kHigh;
  return (below_space | has_zero(v ^ ('"' * kOnes)) | has_zero(v ^ ('\\' * kOnes))) != 0;
}

bool ByteNeedsEscape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; }

// Whether any byte of `s` needs escaping, eight bytes at a time.
bool NeedsEscape(std::string_view s) {
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, s.data() + i, sizeof word);
    if (WordNeedsEscape(word)) return true;
  }
  for (; i < s.size(); ++i)
    if (ByteNeedsEscape(static_cast<unsigned char>(s[i]))) return true;
  return false;
}

}  // namespace

void AppendJsonString(std::string_view s, std::string& out) {
  // Nearly every string: one append of its size with the quotes, then its bytes in place (inside a
  // unity batch each push_back and reserve is a call; a row's encoding writes a string per field).
  if (!NeedsEscape(s)) {
    const std::size_t at = out.size();
    out.append(s.size() + 2, '"');
    if (!s.empty()) std::memcpy(out.data() + at + 1, s.data(), s.size());
    return;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  out.reserve(out.size() + s.size() + 2);
  out.push_back('"');
  // Runs of bytes that need no escape (nearly all of them) are appended whole; they are found
  // eight bytes at a time.
  std::size_t run = 0, i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    if (i + 8 <= n) {
      std::uint64_t word;
      std::memcpy(&word, s.data() + i, sizeof word);
      if (!WordNeedsEscape(word)) {
        i += 8;
        continue;
      }
    }
    const std::size_t end = std::min(n, i + 8);
    for (; i < end; ++i) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c >= 0x20 && c != '"' && c != '\\') continue;
      out.append(s.data() + run, i - run);
      run = i + 1;
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 0xF]);
      }
    }
  }
  out.append(s.data() + run, n - run);
  out.push_back('"');
}

void WriteJson(const json::value& v, std::string& out) {
  switch (v.kind()) {
    case json::kind::null: out += "null"; return;
    case json::kind::bool_: out += v.get_bool() ? "true" : "false"; return;
    case json::kind::int64: {
      char buf[24];
      auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v.get_int64());
      out.append(buf, end);
      return;
    }
    case json::kind::uint64: {
      char buf[24];
      auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v.get_uint64());
      out.append(buf, end);
      return;
    }
    case json::kind::double_: out += FormatNumber(v.get_double()); return;
    case json::kind::string: AppendJsonString(v.get_string(), out); return;
    case json::kind::array: {
      out.push_back('[');
      bool first = true;
      for (const auto& item : v.get_array()) {
        if (!first) out.push_back(',');
        first = false;
        WriteJson(item, out);
      }
      out.push_back(']');
      return;
    }
    case json::kind::object: WriteJson(v.get_object(), out); return;
  }
}

void WriteJson(const json::object& o, std::string& out) {
  out.push_back('{');
  bool first = true;
  for (const auto& kv : o) {
    if (!first) out.push_back(',');
    first = false;
    AppendJsonString(kv.key(), out);
    out.push_back(':');
    WriteJson(kv.value(), out);
  }
  out.push_back('}');
}

std::string ToJson(const json::value& v) {
  std::string out;
  WriteJson(v, out);
  return out;
}

}  // namespace crmd
