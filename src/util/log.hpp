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

// The access-log line of one request, formatted straight into a buffer: it is written for every
// request, so it skips the JSON object Write() builds.
void Request(std::string_view method, std::string_view path, int status, std::size_t bytes, double ms,
             std::string_view ip);

// Lines below this level are dropped. Default: kInfo.
void SetLevel(Level level);

}  // namespace crmd::log
