#include "query/regex_options.hpp"

#include "util/errors.hpp"

namespace crmd::query {

namespace {

bool IsPatternSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// PCRE's extended mode: unescaped whitespace outside a class is no part of the pattern, and `#`
// starts a comment to the end of the line. Escapes and classes are copied as they are.
std::string Extended(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size());
  bool in_class = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      out.push_back(c);
      out.push_back(pattern[++i]);
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      out.push_back(c);
      continue;
    }
    if (IsPatternSpace(c)) continue;
    if (c == '#') {
      while (i + 1 < pattern.size() && pattern[i + 1] != '\n') ++i;
      continue;
    }
    if (c == '[') {
      in_class = true;
      out.push_back(c);
      // A `]` (after an optional `^`) right at the start is a member, not the class's end.
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out.push_back(pattern[++i]);
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out.push_back(pattern[++i]);
      continue;
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

Result<std::string> ApplyRegexOptions(std::string_view pattern, std::string_view options) {
  std::string inline_flags;
  bool extended = false;
  for (char c : options) {
    if (c == 'x') {
      extended = true;
    } else if (c == 'i' || c == 'm' || c == 's') {
      if (inline_flags.find(c) == std::string::npos) inline_flags.push_back(c);
    } else {
      return ApiError{400, errors::kInvalidQuery, "Bad $options value for query: " + std::string(options)};
    }
  }
  std::string body = extended ? Extended(pattern) : std::string(pattern);
  return inline_flags.empty() ? body : "(?" + inline_flags + ")" + body;
}

}  // namespace crmd::query
