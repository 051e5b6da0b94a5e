#include "util/json.hpp"

#include <charconv>
#include <cmath>

#include "util/errors.hpp"

namespace crmd {

Result<json::value> ParseJson(std::string_view text) {
  json::parse_options options;
  options.max_depth = kMaxJsonDepth;
  options.allow_invalid_utf8 = false;
  options.allow_comments = false;
  options.allow_trailing_commas = false;
  boost::system::error_code ec;
  json::value v = json::parse(text, ec, json::storage_ptr(), options);
  if (ec) return errors::InvalidJson(ec.message());
  return v;
}

std::string FormatNumber(double d) {
  if (!std::isfinite(d)) return "null";  // JSON has no NaN or Infinity; JSON.stringify writes null
  if (d == 0) return "0";
  if (std::fabs(d) < 1e21 && d == std::trunc(d)) {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::fixed, 0);
    return std::string(buf, end);
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);  // shortest round-trip
  std::string s(buf, end);
  // to_chars writes `1e+21`/`1e-07`; JavaScript writes `1e+21`/`1e-7`.
  if (auto e = s.find('e'); e != std::string::npos && e + 2 < s.size() && s[e + 2] == '0') {
    s.erase(e + 2, 1);
  }
  return s;
}

namespace {

void WriteString(std::string_view s, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 0xF]);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

}  // namespace

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
    case json::kind::string: WriteString(v.get_string(), out); return;
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
    case json::kind::object: {
      out.push_back('{');
      bool first = true;
      for (const auto& kv : v.get_object()) {
        if (!first) out.push_back(',');
        first = false;
        WriteString(kv.key(), out);
        out.push_back(':');
        WriteJson(kv.value(), out);
      }
      out.push_back('}');
      return;
    }
  }
}

std::string ToJson(const json::value& v) {
  std::string out;
  WriteJson(v, out);
  return out;
}

}  // namespace crmd
