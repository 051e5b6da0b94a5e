#include "util/log.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>

#include <fmt/format.h>

#include "util/json.hpp"
#include "util/time.hpp"

namespace crmd::log {

namespace {
std::atomic<Level> g_level{Level::kInfo};
std::mutex g_mutex;

const char* LevelName(Level level) {
  switch (level) {
    case Level::kDebug: return "debug";
    case Level::kInfo: return "info";
    case Level::kWarn: return "warn";
    case Level::kError: return "error";
  }
  return "info";
}
}  // namespace

void SetLevel(Level level) { g_level = level; }

void Request(std::string_view method, std::string_view path, int status, std::size_t bytes, double ms,
             std::string_view ip) {
  if (Level::kInfo < g_level.load(std::memory_order_relaxed)) return;
  thread_local std::string line;
  line.clear();
  line += "{\"ts\":\"";
  line += timeutil::NowIso();
  line += "\",\"level\":\"info\",\"msg\":\"request\",\"method\":";
  AppendJsonString(method, line);
  line += ",\"path\":";
  AppendJsonString(path, line);
  fmt::format_to(std::back_inserter(line), ",\"status\":{},\"bytes\":{},\"ms\":{:.3f},\"ip\":", status, bytes, ms);
  AppendJsonString(ip, line);
  line += "}\n";
  std::lock_guard lock(g_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

void Write(Level level, std::string_view message, const boost::json::object& fields) {
  if (level < g_level.load(std::memory_order_relaxed)) return;
  boost::json::object line;
  line["ts"] = timeutil::NowIso();
  line["level"] = LevelName(level);
  line["msg"] = message;
  for (const auto& kv : fields) line[kv.key()] = kv.value();
  std::string text = ToJson(line);
  text.push_back('\n');
  std::lock_guard lock(g_mutex);
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

}  // namespace crmd::log
