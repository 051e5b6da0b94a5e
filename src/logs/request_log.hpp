// The request log (spec §2.6 `_RequestLog`, §5.3): one row per write request (POST, PUT, DELETE;
// a batch is one request; reads never), appended off the request's path.
//
// A finished request hands its row to Append(), which only buffers it. The rows are written by
// jobs of the application's write queue, in write units of their own, never in a client's
// transaction, one job of at most 128 rows at a time per application: the next is queued when the
// last one finished. So a client's write waits behind at most one such job (~2 ms), the rows ride
// the commits of the groups the queue runs for its clients (no fsync of their own while clients
// write), and a quiet application writes its rows within about a second (this log's thread starts
// a chain of jobs for every application with rows waiting). Rows waiting are bounded: when the disk
// cannot keep up, rows are dropped (and counted in a log line); requests are never slowed or
// refused.
//
// The class is made by the first rows it gets (spec §2.3: system classes appear on first use).
// Rows older than the retention are deleted in the background, a bounded number per write unit.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
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
    // Applications with rows waiting at most before they are written without waiting for the
    // interval: each is kept open meanwhile, and the open stores are a bounded cache.
    std::size_t max_apps_waiting = 64;
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
  // Starts writing what waits, ends the thread and waits (bounded) until the write queues wrote
  // it; later rows are dropped. Call before the write queues stop.
  void Stop();

 private:
  // The rows of one application that wait, and whether a job of its queue is writing some.
  struct Waiting {
    std::shared_ptr<app::Application> app;
    std::deque<RequestEntry> rows;
    bool writing = false;
  };

  void Loop();
  // Takes the next job's rows of `w` (the caller holds mutex_); empty when none wait.
  std::vector<RequestEntry> NextRows(Waiting& w);
  // Queues the job that writes `rows` for `app`; when it finished, the next one (mutex_ not held).
  void SubmitJob(std::shared_ptr<app::Application> app, std::vector<RequestEntry> rows);
  void Write(app::Application& app, storage::WriteGroup& group, const std::vector<RequestEntry>& rows);
  void Prune(app::Application& app);

  app::Applications& apps_;
  const Options options_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Waiting, std::less<>> waiting_;  // by application id
  std::size_t count_ = 0;      // rows appended and not written yet (waiting or in a job)
  std::uint64_t dropped_ = 0;  // since the last log line
  bool stopping_ = false;
  bool write_now_ = false;  // max_apps_waiting reached
  std::map<std::string, std::chrono::steady_clock::time_point> pruned_;  // by the log's thread only
  std::thread thread_;
};

}  // namespace crmd::logs
