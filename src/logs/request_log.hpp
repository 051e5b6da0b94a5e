// The request log (spec §2.6 `_RequestLog`, §5.3): one row per write request (POST, PUT, DELETE;
// a batch is one request; reads never), appended off the request's path.
//
// A finished request hands its row to Append(), which only buffers it. A thread of this log
// writes each application's buffered rows about once a second, in one write unit per
// application, never in a client's transaction: its unit is a member of the application's commit
// group like any write, so when clients are writing its rows share their commit, and when they
// are not it adds at most one commit a second. The buffer is bounded: when the disk cannot keep
// up, rows are dropped (and counted in a log line), requests are never slowed or refused.
//
// The class is made by the first rows it gets (spec §2.3: system classes appear on first use).
// Rows older than the retention are deleted in the background, a bounded number per write unit.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/application.hpp"

namespace crmd::logs {

// One write request, as `_RequestLog` keeps it. Empty strings and nullopt are stored as null.
struct RequestEntry {
  std::string path;
  std::string method;
  std::string ip;
  std::string referer;
  std::string user_agent;
  std::string user_id;  // the session's user, or the system user for master-key and API-key requests
  bool using_master = false;
  double duration_ms = 0;
  int status = 0;
  std::int64_t content_length = 0;
  std::string service;  // `core` for the record API, `functions` for form functions
  std::string installation_id;
  std::int64_t at_millis = 0;  // when the request arrived
};

class RequestLog {
 public:
  struct Options {
    // How long a row may wait in the buffer.
    std::chrono::milliseconds interval{1000};
    // Rows buffered at most, over all applications: ~1 KiB each.
    std::size_t max_buffered = 50'000;
    // Rows older than this many days are deleted; 0 keeps them.
    int retention_days = 30;
    // How often the retention runs over the open applications.
    std::chrono::minutes retention_every{60};
  };

  RequestLog(app::Applications& apps, Options options);
  ~RequestLog();  // Stop()
  RequestLog(const RequestLog&) = delete;
  RequestLog& operator=(const RequestLog&) = delete;

  // Never blocks on the store and never throws: a row that does not fit is dropped and counted.
  void Append(std::shared_ptr<app::Application> app, RequestEntry entry);
  // Writes what is buffered, then ends the thread; later rows are dropped.
  void Stop();

 private:
  void Loop();
  void Write(app::Application& app, std::vector<RequestEntry>& rows);
  void Prune(app::Application& app);

  app::Applications& apps_;
  const Options options_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::pair<std::shared_ptr<app::Application>, std::vector<RequestEntry>>> buffered_;
  std::size_t count_ = 0;      // rows in buffered_
  std::uint64_t dropped_ = 0;  // since the last log line
  bool stopping_ = false;
  std::map<std::string, std::chrono::steady_clock::time_point> pruned_;  // by the log's thread only
  std::thread thread_;
};

}  // namespace crmd::logs
