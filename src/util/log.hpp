// Structured logs: one JSON object per line on stderr. Never pass a secret (key, token, password)
// to these functions; callers log names and hashes-free identities only.
#pragma once

#include <boost/json.hpp>
#include <string_view>

namespace crmd::log {

enum class Level { kDebug, kInfo, kWarn, kError };

// Emits {"ts":..., "level":..., "msg":..., ...fields}. Thread-safe; a line is written whole.
void Write(Level level, std::string_view message, const boost::json::object& fields = {});

inline void Info(std::string_view m, const boost::json::object& f = {}) { Write(Level::kInfo, m, f); }
inline void Warn(std::string_view m, const boost::json::object& f = {}) { Write(Level::kWarn, m, f); }
inline void Error(std::string_view m, const boost::json::object& f = {}) { Write(Level::kError, m, f); }
// An info line written whatever the level (--log-level): the server's landmarks an operator and
// its tooling wait for (`listening`, `stopping`, `stopped`).
void Announce(std::string_view message, const boost::json::object& fields = {});

// What the access log says of one request (issue 35: which application, and the request id a
// client or proxy can quote). `query` is already redacted (util/redact.hpp); empty fields are left
// out of the line.
struct RequestFacts {
  std::string_view method;
  std::string_view path;
  std::string_view query;
  int status = 0;
  std::size_t bytes = 0;
  double ms = 0;
  std::string_view ip;
  std::string_view app;
  std::string_view request_id;
};

// The access-log line of one request, formatted straight into a buffer: it is written for every
// request, so it skips the JSON object Write() builds.
void Request(const RequestFacts& facts);

// Parses `debug`, `info`, `warn` or `error`; false otherwise.
bool ParseLevel(std::string_view name, Level& level);

// While one exists (the server's lifetime), access-log lines are gathered and written together at
// most kAccessDelay later: one write(2) for many requests instead of one each, off the request's
// path. Other lines flush the gathered ones first, so the log keeps its order; destroying it
// writes what is left.
class AccessLogBatching {
 public:
  AccessLogBatching();
  ~AccessLogBatching();
  AccessLogBatching(const AccessLogBatching&) = delete;
  AccessLogBatching& operator=(const AccessLogBatching&) = delete;
};

// Lines below this level are dropped. Default: kInfo.
void SetLevel(Level level);

}  // namespace crmd::log
