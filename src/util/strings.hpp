// Small string helpers with no project knowledge.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace crmd {

// Splits on `separator`, keeping empty parts: "a,,b" -> {"a", "", "b"}; "" -> {""}.
// The views point into `text`.
std::vector<std::string_view> Split(std::string_view text, char separator);

// `text` percent-encoded byte by byte, RFC 3986's unreserved characters kept: safe as one path
// segment or one query value.
std::string PercentEncode(std::string_view text);

// `text` safe inside HTML text and double- or single-quoted attribute values: & < > " ' as
// character references.
std::string EscapeHtml(std::string_view text);

}  // namespace crmd
