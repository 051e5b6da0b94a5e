#include "files/file_names.hpp"

#include <sodium.h>

#include <cstdint>

#include "util/strings.hpp"

namespace crmd::files {

namespace {

// Well-formed UTF-8 without overlong forms or surrogates: a name is shown to people and put in
// headers (Content-Disposition), where broken sequences cause trouble.
bool IsUtf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      n = 1;
      cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      n = 2;
      cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    for (std::size_t k = 1; k <= n; ++k) {
      if (i + k >= s.size()) return false;
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    const bool overlong = (n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000);
    if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n + 1;
  }
  return true;
}

bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

}  // namespace

bool IsUploadName(std::string_view name) {
  if (name.empty() || name.size() > kMaxFileName || name == "." || name == "..") return false;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || c == '/' || c == '\\') return false;
  }
  return IsUtf8(name);
}

bool IsStoredName(std::string_view name) {
  if (name.size() < kPrefixLength + 2 || name[kPrefixLength] != '_') return false;
  for (std::size_t i = 0; i < kPrefixLength; ++i)
    if (!IsHex(name[i])) return false;
  return IsUploadName(name.substr(kPrefixLength + 1));
}

std::string NewStoredName(std::string_view name) {
  unsigned char bytes[kPrefixLength / 2];
  randombytes_buf(bytes, sizeof bytes);
  char hex[kPrefixLength + 1];
  sodium_bin2hex(hex, sizeof hex, bytes, sizeof bytes);
  std::string out(hex, kPrefixLength);
  out += '_';
  out += name;
  return out;
}

std::string EncodeSegment(std::string_view name) { return PercentEncode(name); }

}  // namespace crmd::files
