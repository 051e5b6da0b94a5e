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
void CountNetworkAction(NetworkAction result);

// What is measured at a scrape rather than counted as it happens.
enum class Gauge {
  kOpenStores,       // application stores open now
  kOpenConnections,  // HTTP connections open now
  kDescriptors,      // file descriptors the process holds
  kDescriptorLimit,  // the open-file limit
  kResidentBytes,    // the process's resident memory
  kRegistryUp,       // 1 when the last poll of the registry succeeded
  kTriggersHeld,     // trigger activations queued, waiting for a retry or running
};
void Set(Gauge gauge, double value);
// Runs before each scrape, to Set() the gauges (main.cpp wires it). Set once, at start.
void OnScrape(std::function<void()> refresh);

// Every series in the Prometheus text format (version 0.0.4).
std::string Scrape();

}  // namespace crmd::metrics
