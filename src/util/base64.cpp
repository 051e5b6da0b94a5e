#include "util/base64.hpp"

#include <sodium.h>

namespace crmd {

namespace {

constexpr const char* kIgnored = " \r\n\t";

// Characters decoded at once by Base64Decoder: whole groups of 4, so no group is ever cut, and
// few enough that a decoder holds a few KiB whatever the text's size.
constexpr std::size_t kDecodeBatch = 4 * 2048;

bool IsIgnored(char c) { return c == ' ' || c == '\r' || c == '\n' || c == '\t'; }

}  // namespace

std::string EncodeBase64(std::string_view bytes) {
  std::string out(sodium_base64_ENCODED_LEN(bytes.size(), sodium_base64_VARIANT_ORIGINAL), '\0');
  sodium_bin2base64(out.data(), out.size(), reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                    sodium_base64_VARIANT_ORIGINAL);
  out.resize(out.size() - 1);  // the terminating NUL sodium writes
  return out;
}

std::optional<std::string> DecodeBase64(std::string_view text) {
  std::string bytes(text.size() / 4 * 3 + 3, '\0');
  std::size_t length = 0;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(bytes.data()), bytes.size(), text.data(), text.size(),
                        kIgnored, &length, nullptr, sodium_base64_VARIANT_ORIGINAL) != 0)
    return std::nullopt;
  bytes.resize(length);
  return bytes;
}

bool Base64Decoder::Add(std::string_view piece, std::string& out) {
  for (char c : piece) {
    if (failed_) return false;
    if (IsIgnored(c)) continue;
    if (padded_) return failed_ = true, false;  // text after the padding
    pending_ += c;
    if (pending_.size() == kDecodeBatch && !Flush(out)) return false;
  }
  return !failed_;
}

bool Base64Decoder::Finish(std::string& out) {
  if (failed_) return false;
  if (pending_.size() % 4 != 0) return failed_ = true, false;
  return Flush(out);
}

bool Base64Decoder::Flush(std::string& out) {
  if (pending_.empty()) return true;
  auto bytes = DecodeBase64(pending_);
  if (!bytes) return failed_ = true, false;
  padded_ = pending_.back() == '=';
  out += *bytes;
  pending_.clear();
  return true;
}

}  // namespace crmd
