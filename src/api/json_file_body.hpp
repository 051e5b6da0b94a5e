// Parse's JSON file body, `{"base64": "...", "_ApplicationId": "...", "_ContentType": ...}`, read
// as a stream (issue 31 #13). The SDK writes `base64` first and the credentials after it, so the
// application is known only at the end of the body: a first pass (Scan) keeps nothing but the
// short string members beside `base64`, and only once the caller is admitted does a second pass
// (DecodeBase64Member) decode `base64` straight into a file. Memory holds one chunk of the body and
// one of the file, whatever their size; nothing is decoded for an application that does not exist.
//
// The body is either an upload's file (Request::body_file) or, for a request that did not come
// through the server's upload path, the in-memory text. Thread-safe (no shared state).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace crmd::api {

// The top-level members of the body, but `base64`'s value.
struct JsonFileMembers {
  // Members whose value is a string of at most kMaxMemberBytes (credentials, `_method`,
  // `_ContentType`); a longer one is listed in `long_strings` instead.
  std::map<std::string, std::string, std::less<>> strings;
  std::set<std::string, std::less<>> long_strings;
  // Members whose value is no string.
  std::set<std::string, std::less<>> not_strings;
  // How many `base64` members hold a string.
  int base64_strings = 0;
};

// No key, application id or method is longer: a longer value is kept out of memory.
inline constexpr std::size_t kMaxMemberBytes = 4096;

// The members of the JSON object in `path` (a file) or `text`; nullopt when it is not one JSON object.
std::optional<JsonFileMembers> ScanJsonFile(const std::string& path, std::string_view text);

// Decodes the first `base64` member of the same body into the file `out_path` (created or
// truncated); false when it is not base64. Throws std::runtime_error when the file cannot be written.
bool DecodeBase64Member(const std::string& path, std::string_view text, const std::string& out_path);
// The same into memory, for a body given as `text`.
std::optional<std::string> DecodeBase64Member(std::string_view text);

}  // namespace crmd::api
