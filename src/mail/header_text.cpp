#include "mail/header_text.hpp"

#include <sodium.h>

namespace crmd::mail {

namespace {

// Bytes of text in one encoded word: base64 of 45 bytes is 60 characters, and with `=?UTF-8?B?`
// and `?=` the word is 72, under RFC 2047's 75.
constexpr std::size_t kWordBytes = 45;

bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7f; }

bool NeedsEncoding(std::string_view text) {
  if (text.size() > kMaxPlainHeaderText || text.find("=?") != std::string_view::npos) return true;
  for (unsigned char c : text)
    if (c >= 0x80) return true;
  return false;
}

std::string Base64(std::string_view bytes) {
  std::string out(sodium_base64_ENCODED_LEN(bytes.size(), sodium_base64_VARIANT_ORIGINAL), '\0');
  sodium_bin2base64(out.data(), out.size(), reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                    sodium_base64_VARIANT_ORIGINAL);
  out.resize(out.size() - 1);  // the terminating NUL
  return out;
}

// How many bytes of `text` from `at` fit in one word without cutting a UTF-8 character in two.
std::size_t WordLength(std::string_view text, std::size_t at) {
  std::size_t end = std::min(text.size(), at + kWordBytes);
  while (end > at && end < text.size() && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) --end;
  return end == at ? std::min(text.size() - at, kWordBytes) : end - at;  // not UTF-8: cut anywhere
}

}  // namespace

std::string HeaderText(std::string_view text) {
  std::string line;
  line.reserve(text.size());
  for (unsigned char c : text) line.push_back(IsControl(c) ? ' ' : static_cast<char>(c));
  if (!NeedsEncoding(line)) return line;
  std::string out;
  for (std::size_t at = 0; at < line.size();) {
    const std::size_t n = WordLength(line, at);
    if (!out.empty()) out += "\r\n ";  // folding: the next word on a continuation line
    out += "=?UTF-8?B?" + Base64(std::string_view(line).substr(at, n)) + "?=";
    at += n;
  }
  return out;
}

}  // namespace crmd::mail
