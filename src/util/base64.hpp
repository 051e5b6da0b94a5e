// Base64 (RFC 4648, the original alphabet) as clients send file contents in JSON.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace crmd {

// The bytes `text` encodes, whitespace ignored; nullopt when it is not base64.
std::optional<std::string> DecodeBase64(std::string_view text);

}  // namespace crmd
