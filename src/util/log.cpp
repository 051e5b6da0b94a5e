#include "util/log.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "util/json.hpp"
#include "util/time.hpp"

namespace crmd::log {

namespace {
std::atomic<Level> g_level{Level::kInfo};
std::mutex g_mutex;  // guards stderr and everything below

// Access lines gathered while batching (AccessLogBatching).
constexpr auto kAccessDelay = std::chrono::milliseconds(20);
constexpr std::size_t kAccessMaxPending = 64 * 1024;
bool g_batching = false;
bool g_stopping = false;
std::string g_pending;
std::condition_variable g_wake;
std::thread g_flusher;

void FlushPendingLocked() {
  if (g_pending.empty()) return;
  std::fwrite(g_pending.data(), 1, g_pending.size(), stderr);
  g_pending.clear();
}

const char* LevelName(Level level) {
  switch (level) {
    case Level::kDebug: return "debug";
    case Level::kInfo: return "info";
    case Level::kWarn: return "warn";
    case Level::kError: return "error";
  }
  return "info";
}

// One line, whatever the level.
void Emit(Level level, std::string_view message, const boost::json::object& fields) {
  boost::json::object line;
  line["ts"] = timeutil::NowIso();
  line["level"] = LevelName(level);
  line["msg"] = message;
  for (const auto& kv : fields) line[kv.key()] = kv.value();
  std::string text = ToJson(line);
  text.push_back('\n');
  std::lock_guard lock(g_mutex);
  FlushPendingLocked();
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

void SetLevel(Level level) { g_level = level; }

bool ParseLevel(std::string_view name, Level& level) {
  for (Level l : {Level::kDebug, Level::kInfo, Level::kWarn, Level::kError})
    if (name == LevelName(l)) {
      level = l;
      return true;
    }
  return false;
}

void Request(const RequestFacts& f) {
  if (Level::kInfo < g_level.load(std::memory_order_relaxed)) return;
  thread_local std::string line;
  line.clear();
  line += "{\"ts\":\"";
  line += timeutil::NowIso();
  line += "\",\"level\":\"info\",\"msg\":\"request\",\"method\":";
  AppendJsonString(f.method, line);
  line += ",\"path\":";
  AppendJsonString(f.path, line);
  if (!f.query.empty()) {
    line += ",\"query\":";
    AppendJsonString(f.query, line);
  }
  fmt::format_to(std::back_inserter(line), ",\"status\":{},\"bytes\":{},\"ms\":{:.3f},\"ip\":", f.status, f.bytes, f.ms);
  AppendJsonString(f.ip, line);
  if (!f.app.empty()) {
    line += ",\"app\":";
    AppendJsonString(f.app, line);
  }
  if (!f.request_id.empty()) {
    line += ",\"requestId\":";
    AppendJsonString(f.request_id, line);
  }
  line += "}\n";
  std::lock_guard lock(g_mutex);
  if (!g_batching) {
    std::fwrite(line.data(), 1, line.size(), stderr);
    return;
  }
  const bool was_empty = g_pending.empty();
  g_pending += line;
  if (g_pending.size() >= kAccessMaxPending) FlushPendingLocked();
  else if (was_empty) g_wake.notify_one();
}

AccessLogBatching::AccessLogBatching() {
  std::lock_guard lock(g_mutex);
  g_batching = true;
  g_stopping = false;
  g_flusher = std::thread([] {
    std::unique_lock lock(g_mutex);
    while (!g_stopping) {
      g_wake.wait(lock, [] { return g_stopping || !g_pending.empty(); });
      // Lines arriving meanwhile join this write.
      g_wake.wait_for(lock, kAccessDelay, [] { return g_stopping; });
      FlushPendingLocked();
    }
  });
}

AccessLogBatching::~AccessLogBatching() {
  {
    std::lock_guard lock(g_mutex);
    g_stopping = true;
  }
  g_wake.notify_all();
  g_flusher.join();
  std::lock_guard lock(g_mutex);
  FlushPendingLocked();
  g_batching = false;
}

void Announce(std::string_view message, const boost::json::object& fields) { Emit(Level::kInfo, message, fields); }

void Write(Level level, std::string_view message, const boost::json::object& fields) {
  if (level < g_level.load(std::memory_order_relaxed)) return;
  Emit(level, message, fields);
}


}  // namespace crmd::log
