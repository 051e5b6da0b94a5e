// The process's metrics (issue 35), exposed in the Prometheus text format on their own listener
// (`crmd serve --metrics-listen`, never the public port). prometheus-cpp (Debian's
// prometheus-cpp-dev) keeps the series and writes the format; this header is all the rest of the
// tree sees of it, so no other file compiles its headers.
//
// Cardinality is bounded whatever the number of tenants: request series are labelled by route
// family (a fixed list, http/) and status code; per-application series exist only for the
// kBusiestApps applications with the most requests since the start (the counts of all are kept in
// one map, a few dozen bytes each; only the top ones are written out at a scrape).
//
// Thread-safe: every function may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace crmd::metrics {

// Per-application series are written for this many applications at most.
inline constexpr std::size_t kBusiestApps = 20;

// Metrics are kept from this call on (main.cpp, when --metrics-listen is given); before it, and
// without it, every function below returns at once.
void Enable();
// Whether metrics are kept: a caller may skip the work of a label no one will read.
bool Enabled();

// One answered request: its route family (a fixed word), status and time; `app` may be empty.
void CountRequest(std::string_view family, int status, double seconds, std::string_view app);
// A read ran past its slice on a network thread and moved to the slow-read pool.
void CountReadMovedOff();
// A read ran past --read-timeout (400 code 124).
void CountReadTimeout();
// A durable commit and its time, the fsync (SQLite) or the round trip (PostgreSQL) included, by
// the path it took: "write_queue" (an application's queue: one COMMIT per run, both stores),
// "grouped" (SQLite's writer threads sharing one), "single" (PostgreSQL's own transaction).
void ObserveCommit(std::string_view path, double seconds);

// A webhook or mail action of a trigger (docs/TRIGGERS.md), once its delivery was tried.
enum class NetworkAction {
  kDelivered,  // the receiver took it
  kRetried,    // it failed, and waits for another attempt (--trigger-retries)
  kFailed,     // it failed for good (its failure is recorded in _syslogTriggers)
};
enum class NetworkKind { kWebhook, kMail };
void CountNetworkAction(NetworkKind kind, NetworkAction result);

// Application stores the cache closed to make room, by why: past --max-open-apps, or short of
// file descriptors. Not counted: a store closed because its application was deleted.
enum class Eviction { kCacheFull, kDescriptors };
void CountStoreEvictions(Eviction why, std::size_t stores);

// A call of an operator's (Lua) function, by how it ended or why it did not run.
enum class FunctionResult {
  kOk,            // answered 200
  kFailed,        // an error of its own (error(...), a failed crm call nobody caught, a store fault)
  kTimeout,       // ran past its time limit (--function-timeout-ms)
  kInstructions,  // ran past its instruction budget (--function-instructions)
  kOutOfMemory,   // ran past its memory cap (--function-memory-mib)
  kBusy,          // refused: its application's share of function threads was taken (429)
  kRate,          // refused: its caller's address made too many calls this minute (429; forms too)
};
void CountFunctionCall(FunctionResult result);

// A mail once handed to its way out: the SMTP server (or the queue before it), or the
// application's outbox folder.
enum class MailVia { kSmtp, kOutbox };
enum class MailResult {
  kSent,     // the SMTP server took it, or its file is in the outbox folder
  kFailed,   // the server refused it or could not be reached, or the file could not be written
  kDropped,  // the SMTP queue was full (SmtpMailer::kMaxQueued): never tried
};
void CountMail(MailVia via, MailResult result);

// A PostgreSQL statement that failed, by what the server (or libpq) said.
enum class StatementError {
  kDuplicate,    // a unique key taken: expected by its caller (an objectId drawn twice, a race)
  kCanceled,     // statement_timeout: a read past its slice (then moved) or its deadline
  kUnavailable,  // the connection broke or the server is going away
  kOther,        // anything else: a fault of crmd or of the database
};
void CountStatementError(StatementError kind);

// What is measured now: at a scrape (OnScrape), or as it changes where that is as cheap.
enum class Gauge {
  kOpenStores,       // application stores open now
  kOpenConnections,  // HTTP connections open now
  kDescriptors,      // file descriptors the process holds
  kDescriptorLimit,  // the open-file limit
  kResidentBytes,    // the process's resident memory
  kRegistryUp,       // 1 when the last poll of the registry succeeded
  kTriggersHeld,     // trigger activations queued, waiting for a retry or running
  kTriggerOldestHeld,  // seconds the oldest of those has been held by this server (0: none)
  kWritesQueued,     // writes in the applications' write queues, waiting or running
  kPoolInUse,        // PostgreSQL connections lent out now (set by the pool as it changes)
  kPoolWaiting,      // callers waiting for a PostgreSQL connection now (likewise)
};
void Set(Gauge gauge, double value);
// Runs before each scrape, to Set() the gauges (main.cpp wires it). Set once, at start.
void OnScrape(std::function<void()> refresh);

// Every series in the Prometheus text format (version 0.0.4).
std::string Scrape();

}  // namespace crmd::metrics
