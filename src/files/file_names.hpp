// Names of uploaded files (spec §4.8): any name a client sends is accepted (spaces, parentheses,
// non-Latin text), and stored behind a random prefix, `<32 hex>_<name>`, which is the `name` the
// upload answers and the file's name in `DATA/apps/<appId>/files/`. A name that could leave that
// folder or confuse a file system is refused: empty, `.` or `..`, a `/` or `\`, a NUL or another
// control character, invalid UTF-8, or longer than kMaxFileName bytes (the stored name must fit
// the 255 bytes a Linux file name may have).
#pragma once

#include <string>
#include <string_view>

namespace crmd::files {

inline constexpr std::size_t kPrefixLength = 32;  // hex digits of 16 random bytes
inline constexpr std::size_t kMaxFileName = 255 - kPrefixLength - 1;

// Whether `name` (decoded from the path) may be uploaded under.
bool IsUploadName(std::string_view name);
// Whether `name` is one an upload answered: the prefix, `_`, and an upload name.
bool IsStoredName(std::string_view name);
// `<32 random hex>_<name>` for an upload name.
std::string NewStoredName(std::string_view name);
// `name` percent-encoded as one path segment of a URL (RFC 3986 unreserved characters kept).
std::string EncodeSegment(std::string_view name);

}  // namespace crmd::files
