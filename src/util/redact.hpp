// What a log line may say of a request's query string (issue 35: no secret in any line). A
// parameter whose name speaks of a secret keeps its name and loses its value:
// `?token=abc&where={}` -> `?token=[redacted]&where={}`. Names are matched case-insensitively on
// the words keys, tokens, OAuth codes, tickets, passwords, sessions and signatures are sent under
// (`key`, `masterKey`, `access_token`, `code`, `ticket`, `sessionToken`, `client_secret`, ...):
// more is hidden than needs to be rather than less.
//
// Thread-safe (no state).
#pragma once

#include <string>
#include <string_view>

namespace crmd {

// `query` (without its `?`) with the values of secret parameters replaced by `[redacted]`.
std::string RedactQuery(std::string_view query);

}  // namespace crmd
