#include "metrics/metrics.hpp"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <map>
#include <unordered_map>
#include <vector>

namespace crmd::metrics {

namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

// Request times: 1 ms (a get by id) to 10 s (past it, --read-timeout is near).
const prometheus::Histogram::BucketBoundaries kRequestBuckets{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                              0.1,   0.25,   0.5,   1,    2.5,   5,    10};
// Commit times: a SQLite fsync is 0.1-10 ms on an SSD, a PostgreSQL round trip ~0.5 ms.
const prometheus::Histogram::BucketBoundaries kCommitBuckets{0.0005, 0.001, 0.002, 0.005, 0.01, 0.02,
                                                             0.05,   0.1,   0.25,  0.5,   1};

struct Metrics {
  prometheus::Registry registry;
  prometheus::Family<prometheus::Counter>& requests =
      BuildCounter().Name("crmd_http_requests_total").Help("Requests answered, by route family and status").Register(registry);
  prometheus::Family<prometheus::Histogram>& request_seconds =
      BuildHistogram().Name("crmd_http_request_duration_seconds").Help("Request time, from the head read to the answer sent, by route family").Register(registry);
  prometheus::Counter& reads_moved =
      BuildCounter().Name("crmd_reads_moved_total").Help("Reads that ran past their slice and moved to the slow-read pool").Register(registry).Add({});
  prometheus::Counter& read_timeouts =
      BuildCounter().Name("crmd_read_timeouts_total").Help("Reads that ran past --read-timeout (400 code 124)").Register(registry).Add({});
  prometheus::Family<prometheus::Counter>& network_actions =
      BuildCounter().Name("crmd_trigger_network_actions_total").Help("Trigger webhook and mail actions, by kind (webhook, mail) and result: delivered, retried, failed").Register(registry);
  prometheus::Family<prometheus::Counter>& evictions =
      BuildCounter().Name("crmd_store_evictions_total").Help("Application stores closed to make room, by reason: cache_full (--max-open-apps), descriptors").Register(registry);
  prometheus::Family<prometheus::Counter>& function_calls =
      BuildCounter().Name("crmd_function_calls_total").Help("Calls of operator (Lua) functions, by result: ok, failed, timeout, instructions, out_of_memory, busy, rate").Register(registry);
  prometheus::Family<prometheus::Counter>& mails =
      BuildCounter().Name("crmd_mails_total").Help("Mails, by way out (smtp, outbox) and result: sent, failed, dropped").Register(registry);
  prometheus::Family<prometheus::Counter>& statement_errors =
      BuildCounter().Name("crmd_pg_statement_errors_total").Help("PostgreSQL statements that failed, by kind: duplicate, canceled, unavailable, other").Register(registry);
  prometheus::Family<prometheus::Histogram>& commit_seconds =
      BuildHistogram().Name("crmd_commit_duration_seconds").Help("Durable commits, fsync or round trip included, by path").Register(registry);
  prometheus::Gauge& open_stores = Gauge("crmd_open_stores", "Application stores open");
  prometheus::Gauge& open_connections = Gauge("crmd_open_connections", "HTTP connections open");
  prometheus::Gauge& descriptors = Gauge("process_open_fds", "File descriptors the process holds");
  prometheus::Gauge& descriptor_limit = Gauge("process_max_fds", "The process's open-file limit");
  prometheus::Gauge& resident = Gauge("process_resident_memory_bytes", "Resident memory of the process");
  prometheus::Gauge& registry_up = Gauge("crmd_registry_up", "1 when the last poll of the registry succeeded");
  prometheus::Gauge& triggers_held =
      Gauge("crmd_trigger_activations_held", "Trigger activations this server holds: queued, waiting for a retry or running");
  prometheus::Gauge& trigger_oldest =
      Gauge("crmd_trigger_oldest_held_seconds", "How long this server has held its oldest trigger activation (0: none held)");
  prometheus::Gauge& writes_queued =
      Gauge("crmd_write_queue_depth", "Writes in the open applications' write queues, waiting or running");
  prometheus::Gauge& pool_in_use = Gauge("crmd_pg_pool_in_use", "PostgreSQL connections lent out by the pool (0 on SQLite)");
  prometheus::Gauge& pool_waiting = Gauge("crmd_pg_pool_waiting", "Callers waiting for a PostgreSQL connection (0 on SQLite)");

  prometheus::Gauge& Gauge(const std::string& name, const std::string& help) {
    return BuildGauge().Name(name).Help(help).Register(registry).Add({});
  }

  std::mutex mutex;  // guards the fields below
  std::map<std::string, std::uint64_t, std::less<>> app_requests;
  std::function<void()> refresh;
};

Metrics& Get() {
  static Metrics* metrics = new Metrics();  // never destroyed: threads may count during the exit
  return *metrics;
}

// The per-application requests of the busiest applications, as a family of its own.
prometheus::MetricFamily BusiestApps(Metrics& m) {
  std::vector<std::pair<std::string, std::uint64_t>> top;
  {
    std::lock_guard lock(m.mutex);
    top.assign(m.app_requests.begin(), m.app_requests.end());
  }
  const std::size_t n = std::min(top.size(), kBusiestApps);
  std::partial_sort(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(n), top.end(),
                    [](const auto& a, const auto& b) { return a.second > b.second || (a.second == b.second && a.first < b.first); });
  prometheus::MetricFamily family;
  family.name = "crmd_app_requests_total";
  family.help = "Requests of the busiest applications since the start (the 20 with the most)";
  family.type = prometheus::MetricType::Counter;
  for (std::size_t i = 0; i < n; ++i) {
    prometheus::ClientMetric metric;
    metric.label.push_back({"app", top[i].first});
    metric.counter.value = static_cast<double>(top[i].second);
    family.metric.push_back(std::move(metric));
  }
  return family;
}

}  // namespace

namespace {
// Off until a listener will read them: a server without --metrics-listen pays nothing per request.
std::atomic<bool> g_enabled{false};
bool On() { return g_enabled.load(std::memory_order_relaxed); }
}  // namespace

void Enable() { g_enabled.store(true, std::memory_order_relaxed); }
bool Enabled() { return On(); }

void CountRequest(std::string_view family, int status, double seconds, std::string_view app) {
  if (!On()) return;
  Metrics& m = Get();
  // Family::Add hashes the labels under the family's lock at every call: each network thread keeps
  // the series it has used (they live as long as the registry), and the hot path takes no lock
  // and makes no string but for a new family or status.
  struct Series {
    std::string family;  // what the key was made of: a hash collision takes the slow path
    int status;
    prometheus::Counter* requests;
    prometheus::Histogram* seconds;
  };
  thread_local std::unordered_map<std::uint64_t, Series> known;
  const std::uint64_t key = (std::hash<std::string_view>{}(family) << 10) ^ static_cast<std::uint64_t>(status);
  auto it = known.find(key);
  if (it == known.end()) {
    const std::string f(family);
    it = known.emplace(key, Series{f, status, &m.requests.Add({{"family", f}, {"status", std::to_string(status)}}),
                                   &m.request_seconds.Add({{"family", f}}, kRequestBuckets)}).first;
  }
  if (it->second.family == family && it->second.status == status) {
    it->second.requests->Increment();
    it->second.seconds->Observe(seconds);
  } else {
    const std::string f(family);
    m.requests.Add({{"family", f}, {"status", std::to_string(status)}}).Increment();
    m.request_seconds.Add({{"family", f}}, kRequestBuckets).Observe(seconds);
  }
  if (app.empty()) return;
  std::lock_guard lock(m.mutex);
  if (auto found = m.app_requests.find(app); found != m.app_requests.end()) ++found->second;
  else m.app_requests.emplace(std::string(app), 1);
}

void CountReadMovedOff() {
  if (On()) Get().reads_moved.Increment();
}
void CountReadTimeout() {
  if (On()) Get().read_timeouts.Increment();
}

void ObserveCommit(std::string_view path, double seconds) {
  if (!On()) return;
  Get().commit_seconds.Add({{"path", std::string(path)}}, kCommitBuckets).Observe(seconds);
}

void CountNetworkAction(NetworkKind kind, NetworkAction result) {
  if (!On()) return;
  const char* name = "delivered";
  switch (result) {
    case NetworkAction::kDelivered: name = "delivered"; break;
    case NetworkAction::kRetried: name = "retried"; break;
    case NetworkAction::kFailed: name = "failed"; break;
  }
  const char* way = "webhook";
  switch (kind) {
    case NetworkKind::kWebhook: way = "webhook"; break;
    case NetworkKind::kMail: way = "mail"; break;
  }
  Get().network_actions.Add({{"kind", way}, {"result", name}}).Increment();
}

void CountStoreEvictions(Eviction why, std::size_t stores) {
  if (!On() || stores == 0) return;
  const char* reason = "cache_full";
  switch (why) {
    case Eviction::kCacheFull: reason = "cache_full"; break;
    case Eviction::kDescriptors: reason = "descriptors"; break;
  }
  Get().evictions.Add({{"reason", reason}}).Increment(static_cast<double>(stores));
}

void CountFunctionCall(FunctionResult result) {
  if (!On()) return;
  const char* name = "ok";
  switch (result) {
    case FunctionResult::kOk: name = "ok"; break;
    case FunctionResult::kFailed: name = "failed"; break;
    case FunctionResult::kTimeout: name = "timeout"; break;
    case FunctionResult::kInstructions: name = "instructions"; break;
    case FunctionResult::kOutOfMemory: name = "out_of_memory"; break;
    case FunctionResult::kBusy: name = "busy"; break;
    case FunctionResult::kRate: name = "rate"; break;
  }
  Get().function_calls.Add({{"result", name}}).Increment();
}

void CountMail(MailVia via, MailResult result) {
  if (!On()) return;
  const char* way = "smtp";
  switch (via) {
    case MailVia::kSmtp: way = "smtp"; break;
    case MailVia::kOutbox: way = "outbox"; break;
  }
  const char* name = "sent";
  switch (result) {
    case MailResult::kSent: name = "sent"; break;
    case MailResult::kFailed: name = "failed"; break;
    case MailResult::kDropped: name = "dropped"; break;
  }
  Get().mails.Add({{"via", way}, {"result", name}}).Increment();
}

void CountStatementError(StatementError kind) {
  if (!On()) return;
  const char* name = "other";
  switch (kind) {
    case StatementError::kDuplicate: name = "duplicate"; break;
    case StatementError::kCanceled: name = "canceled"; break;
    case StatementError::kUnavailable: name = "unavailable"; break;
    case StatementError::kOther: name = "other"; break;
  }
  Get().statement_errors.Add({{"kind", name}}).Increment();
}

void Set(Gauge gauge, double value) {
  if (!On()) return;
  Metrics& m = Get();
  switch (gauge) {
    case Gauge::kOpenStores: m.open_stores.Set(value); return;
    case Gauge::kOpenConnections: m.open_connections.Set(value); return;
    case Gauge::kDescriptors: m.descriptors.Set(value); return;
    case Gauge::kDescriptorLimit: m.descriptor_limit.Set(value); return;
    case Gauge::kResidentBytes: m.resident.Set(value); return;
    case Gauge::kRegistryUp: m.registry_up.Set(value); return;
    case Gauge::kTriggersHeld: m.triggers_held.Set(value); return;
    case Gauge::kTriggerOldestHeld: m.trigger_oldest.Set(value); return;
    case Gauge::kWritesQueued: m.writes_queued.Set(value); return;
    case Gauge::kPoolInUse: m.pool_in_use.Set(value); return;
    case Gauge::kPoolWaiting: m.pool_waiting.Set(value); return;
  }
}

void OnScrape(std::function<void()> refresh) {
  Metrics& m = Get();
  std::lock_guard lock(m.mutex);
  m.refresh = std::move(refresh);
}

std::string Scrape() {
  Metrics& m = Get();
  std::function<void()> refresh;
  {
    std::lock_guard lock(m.mutex);
    refresh = m.refresh;
  }
  if (refresh) refresh();
  auto families = m.registry.Collect();
  families.push_back(BusiestApps(m));
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace crmd::metrics
