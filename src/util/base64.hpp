// Base64 (RFC 4648, the original alphabet) as clients send file contents in JSON.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace crmd {

// `bytes` in base64, padded, without line breaks.
std::string EncodeBase64(std::string_view bytes);

// The bytes `text` encodes, whitespace ignored; nullopt when it is not base64.
std::optional<std::string> DecodeBase64(std::string_view text);

// The same decoding a piece at a time, for a text too large to hold whole (a file sent as JSON):
// the pieces together are accepted exactly when DecodeBase64 accepts their concatenation.
// Not thread-safe; one decoder per text.
class Base64Decoder {
 public:
  // Appends to `out` the bytes of the groups `piece` completes; false once the text so far cannot
  // be base64 (the decoder then stays failed).
  bool Add(std::string_view piece, std::string& out);
  // Appends what is left; false when the text ended inside a group or was not base64.
  bool Finish(std::string& out);

 private:
  bool Flush(std::string& out);

  std::string pending_;   // characters of the text not decoded yet, whitespace removed
  bool padded_ = false;   // a group with `=` was decoded: nothing but whitespace may follow
  bool failed_ = false;
};

}  // namespace crmd
