#include "util/redact.hpp"

#include <array>

namespace crmd {

namespace {

// Parts of a parameter's name that mark its value secret (lower case).
constexpr std::array<std::string_view, 10> kSecretWords = {"key", "token", "secret", "password", "code",
                                                           "ticket", "session", "signature", "auth", "state"};

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The name as a server reads it (percent-decoded, `+` as a space), in lower case: `t%6Fken` is a
// token too.
bool IsSecretName(std::string_view name) {
  std::string lower;
  lower.reserve(name.size());
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c == '%' && i + 2 < name.size() && HexDigit(name[i + 1]) >= 0 && HexDigit(name[i + 2]) >= 0) {
      c = static_cast<char>(HexDigit(name[i + 1]) * 16 + HexDigit(name[i + 2]));
      i += 2;
    }
    lower.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  // The queries' field lists (spec §4.2 `keys`, Parse's `excludeKeys`): names of fields, not a key.
  if (lower == "keys" || lower == "excludekeys") return false;
  for (auto word : kSecretWords)
    if (lower.find(word) != std::string::npos) return true;
  return false;
}

}  // namespace

std::string RedactQuery(std::string_view query) {
  std::string out;
  out.reserve(query.size());
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const auto eq = pair.find('=');
    if (eq != std::string_view::npos && IsSecretName(pair.substr(0, eq))) {
      out += pair.substr(0, eq + 1);
      out += "[redacted]";
    } else {
      out += pair;
    }
    if (amp != std::string_view::npos) out += '&';
  }
  return out;
}

}  // namespace crmd
