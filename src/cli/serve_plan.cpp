#include "cli/serve_plan.hpp"

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "auth/password_gate.hpp"
#include "cli/instance_name.hpp"
#include "storage/sqlite/sqlite_store.hpp"
#include "util/log.hpp"
#include "util/phone.hpp"
#include "util/time.hpp"

namespace crmd::cli {

namespace {

// The descriptors a server holds whatever it serves: stdio, its lock files, the registry's reader
// and watcher (each a database and its log), the signal pipe, the listening socket, one store with
// its log and a few connections.
constexpr std::uint64_t kFixedDescriptors = 20;
// Each network thread's event loop: an epoll, an eventfd and a timerfd (the accept loop's too).
constexpr std::uint64_t kDescriptorsPerNetworkThread = 3;

// Connections the /metrics listener keeps at most: scrapers, not clients.
constexpr int kMetricsConnections = 16;

// Raises the soft limit of open files to the hard one; returns the limit now in force.
std::uint64_t RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    const rlim_t before = limit.rlim_cur;
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) limit.rlim_cur = before;
  }
  return limit.rlim_cur == RLIM_INFINITY ? 1u << 20 : static_cast<std::uint64_t>(limit.rlim_cur);
}

void TuneMalloc(int cores) {
  // glibc gives each thread its own malloc arena, up to 8 per core, and an arena keeps what was
  // freed in it: with twenty-odd threads that is most of the process's memory. Threads sharing a
  // few arenas cost a little locking and keep the process at a fraction of the size: one per
  // core (two per core measured the same CPU per request and a peak ~1 MiB higher).
  mallopt(M_ARENA_MAX, cores);
  // A page of results is a body of ~100 KiB built and freed per request. By default glibc hands
  // such blocks back to the kernel (mmap above 128 KiB, heap trimming on free) and faults them
  // in again on the next request: ~80 page faults and a quarter of a query's CPU. Keep up to a few
  // MiB around instead.
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  mallopt(M_TRIM_THRESHOLD, 8 << 20);
  mallopt(M_TOP_PAD, 1 << 20);
}

// `HOST:PORT` of the flag `name` into `out`.
std::optional<std::string> PlanAddress(const std::string& name, const std::string& value, http::ServerOptions& out) {
  auto colon = value.rfind(':');
  if (colon == std::string::npos) return name + " must be HOST:PORT";
  out.host = value.substr(0, colon);
  try {
    int port = std::stoi(value.substr(colon + 1));
    if (port < 0 || port > 65535) return name + " port out of range";
    out.port = static_cast<unsigned short>(port);
  } catch (const std::exception&) {
    return name + " must be HOST:PORT";
  }
  return std::nullopt;
}

// The /metrics listener: one thread, a few connections (a scraper or two), nothing else.
std::optional<std::string> PlanMetrics(const ServeFlags& flags, std::optional<http::ServerOptions>& out) {
  if (flags.metrics_listen.empty()) return std::nullopt;
  http::ServerOptions metrics;
  if (auto wrong = PlanAddress("--metrics-listen", flags.metrics_listen, metrics)) return wrong;
  metrics.threads = 1;
  metrics.write_threads = 1;
  metrics.slow_read_threads = 1;
  metrics.max_connections = kMetricsConnections;
  metrics.slow_request = std::chrono::milliseconds(0);
  out = std::move(metrics);
  return std::nullopt;
}

// The network side: the listening address, threads, body limits, uploads and timeouts.
std::optional<std::string> PlanServer(const ServeFlags& flags, int cores, std::uint64_t open_files, http::ServerOptions& out) {
  if (auto wrong = PlanAddress("--listen", flags.listen, out)) return wrong;
  // Reads run on the network threads; writes, which wait for their group's fsync, on their own.
  out.threads = flags.threads > 0 ? flags.threads : cores * 2;
  out.write_threads = flags.write_threads > 0 ? flags.write_threads : cores * 8;
  if (flags.max_file_size_mib < 0) return "--max-file-size must be 0 (no cap) or more";
  if (flags.max_file_size_mib > 0) out.upload_body_limit = static_cast<std::uint64_t>(flags.max_file_size_mib) << 20;
  if (flags.upload_min_rate < 0 || flags.upload_timeout <= 0 || flags.upload_rate < 0)
    return "--upload-min-rate and --upload-rate must be 0 (no limit) or more, --upload-timeout positive";
  out.upload_min_rate = static_cast<std::uint64_t>(flags.upload_min_rate);
  out.upload_timeout = std::chrono::seconds(flags.upload_timeout);
  if (flags.request_timeout <= 0 || flags.idle_timeout <= 0 || flags.drain_timeout <= 0)
    return "--request-timeout, --idle-timeout and --drain-timeout must be positive";
  out.drain_timeout = std::chrono::seconds(flags.drain_timeout);
  out.request_timeout = std::chrono::seconds(flags.request_timeout);
  out.idle_timeout = std::chrono::seconds(flags.idle_timeout);
  if (flags.max_connections < 0) return "--max-connections must be positive";
  if (flags.slow_request_ms < 0) return "--slow-request-ms must be 0 (none) or more";
  std::string wrong_proxies;
  auto proxies = http::TrustedProxies::Parse(flags.trusted_proxies, wrong_proxies);
  if (!proxies) return wrong_proxies;
  out.trusted_proxies = std::move(*proxies);
  out.slow_request = std::chrono::milliseconds(flags.slow_request_ms);
  out.max_connections = flags.max_connections > 0 ? flags.max_connections
                                                  : static_cast<int>(std::clamp<std::uint64_t>(open_files / 4, 16, 10'000));
  return std::nullopt;
}

// The stores: durability, readers, how many stay open, the page cache, the PostgreSQL pool.
std::optional<std::string> PlanStores(const ServeFlags& flags, const http::ServerOptions& server, std::uint64_t open_files,
                                      app::StoreOptions& out) {
  out.durability = flags.durability == "normal" ? storage::Durability::kNormal : storage::Durability::kFull;
  // Idle reader connections kept: one per thread that reads; more are opened when a request needs
  // two at once, and closed when they come back.
  out.readers = server.threads + server.write_threads;
  // What connections leave of the open-file limit, at ~16 descriptors per store (a writer, a few
  // readers, each with its log).
  if (flags.max_open_apps < 0 || flags.page_cache_mib <= 0) return "--max-open-apps and --page-cache-mib must be positive";
  out.max_open = flags.max_open_apps > 0
                     ? static_cast<std::size_t>(flags.max_open_apps)
                     : std::clamp<std::uint64_t>((open_files - std::min<std::uint64_t>(open_files, server.max_connections)) / 16, 16, 1000);
  storage::LimitPageCache(static_cast<std::int64_t>(flags.page_cache_mib) << 20);
  out.url = flags.store;
  if (!flags.store.empty()) out.instance = InstanceName(flags.listen, flags.data);
  // A connection for each thread that may hold one, and as many again for the requests that
  // hold two at once (a streaming find and the lookups of its includes).
  out.connections = static_cast<std::size_t>(2 * (server.threads + server.write_threads + flags.trigger_threads) + 4);
  return std::nullopt;
}

// What every application is served with, and the password gate.
std::optional<std::string> PlanSettings(const ServeFlags& flags, int cores, app::Settings& out) {
  if (flags.session_ttl <= 0 || flags.lockout_minutes <= 0) return "--session-ttl and --lockout-minutes must be positive";
  out.session_ttl = std::chrono::seconds(flags.session_ttl);
  out.lockout = std::chrono::minutes(flags.lockout_minutes);
  out.prefix = flags.prefix;
  out.smtp_url = flags.smtp_url;
  out.mail_from = flags.mail_from;
  if (flags.reset_mails_per_hour < 0 || flags.password_slots < 0 || flags.password_rate <= 0)
    return "--reset-mails-per-hour, --password-slots and --password-rate must be positive";
  out.reset_mails_per_hour = flags.reset_mails_per_hour;
  auth::PasswordGate::Limits passwords;
  passwords.slots = flags.password_slots > 0 ? flags.password_slots : cores;
  passwords.per_ip_per_second = flags.password_rate / 60.0;
  passwords.per_ip_burst = flags.password_rate;
  auth::PasswordGate::Configure(passwords);
  return std::nullopt;
}

// The router's reads, functions and anonymous doors.
std::optional<std::string> PlanRouter(const ServeFlags& flags, int cores, api::RouterOptions& out,
                                      app::FunctionPool::Options& functions) {
  if (flags.read_timeout <= 0 || flags.read_slice_ms <= 0) return "--read-timeout and --read-slice-ms must be positive";
  out.prefix = flags.prefix;
  out.read_timeout = std::chrono::seconds(flags.read_timeout);
  out.read_slice = std::chrono::milliseconds(flags.read_slice_ms);
  if (flags.function_memory_mib <= 0 || flags.function_instructions <= 0)
    return "--function-memory-mib and --function-instructions must be positive";
  out.function_limits.memory_bytes = static_cast<std::size_t>(flags.function_memory_mib) << 20;
  out.function_limits.instructions = flags.function_instructions;
  if (flags.function_timeout_ms <= 0 || flags.function_threads < 0 || flags.function_threads_per_app < 1 ||
      flags.form_calls_per_minute < 0)
    return "--function-timeout-ms and --function-threads-per-app must be positive, --function-threads and "
           "--form-calls-per-minute 0 or more";
  out.function_limits.time = std::chrono::milliseconds(flags.function_timeout_ms);
  out.function_calls_per_minute = flags.form_calls_per_minute;
  functions.threads = flags.function_threads > 0 ? flags.function_threads : 2 * cores;
  functions.per_app = flags.function_threads_per_app;
  if (flags.signin_rate < 0) return "--signin-rate must be 0 (no limit) or more";
  out.signin_per_minute = flags.signin_rate;
  out.console = flags.console != "off";
  out.upload_rate = flags.upload_rate;
  return std::nullopt;
}

std::optional<std::string> PlanTriggers(const ServeFlags& flags, triggers::Runner::Options& out) {
  if (flags.trigger_retries < 0 || flags.trigger_retry_delay_ms < 0 || flags.trigger_threads < 1 || flags.trigger_lease < 1)
    return "--trigger-retries and --trigger-retry-delay must be 0 or more, --trigger-threads and --trigger-lease 1 or more";
  out.threads = flags.trigger_threads;
  out.lease = std::chrono::seconds(flags.trigger_lease);
  out.retries = flags.trigger_retries;
  out.retry_delay = std::chrono::milliseconds(flags.trigger_retry_delay_ms);
  out.webhook.allow_private = flags.allow_private_webhooks;
  if (const char* hold = std::getenv("CRMD_TRIGGER_HOLD_MS")) {
    out.hold = std::chrono::milliseconds(std::strtol(hold, nullptr, 10));
    log::Warn("trigger actions are held for testing", {{"hold_ms", out.hold.count()}});
  }
  return std::nullopt;
}

// A test seam (util/time.hpp): end-to-end tests start a server days later to see retention.
std::optional<std::string> ShiftClockForTests() {
  const char* offset = std::getenv("CRMD_TEST_CLOCK_OFFSET_MS");
  if (!offset) return std::nullopt;
  std::int64_t millis = 0;
  try {
    millis = std::stoll(offset);
  } catch (const std::exception&) {
    return "CRMD_TEST_CLOCK_OFFSET_MS must be a number of milliseconds";
  }
  timeutil::SetClockOffset(millis);
  log::Warn("the clock is shifted for testing", {{"offset_ms", millis}});
  return std::nullopt;
}

}  // namespace

std::uint64_t OpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  return limit.rlim_cur == RLIM_INFINITY ? 1u << 20 : static_cast<std::uint64_t>(limit.rlim_cur);
}

std::variant<ServePlan, std::string> PlanServe(const ServeFlags& flags) {
  log::Level level = log::Level::kInfo;
  if (!log::ParseLevel(flags.log_level, level)) return "--log-level takes debug, info, warn or error";
  log::SetLevel(level);
  // Loaded at the first phone number, which may come hours later: a copy of the binary without
  // its module is refused now, in a sentence, instead.
  if (auto missing = phone::ModuleProblem()) return *missing;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  TuneMalloc(cores);
  ServePlan plan;
  plan.memory_trim = std::make_unique<MemoryTrim>();
  // Every connection and every open store holds descriptors: take all the system allows.
  plan.open_files = RaiseOpenFileLimit();
  if (auto wrong = PlanServer(flags, cores, plan.open_files, plan.server)) return *wrong;
  // Issue 35: short of these, the server said it listened and then failed (an accept loop that
  // never accepts, a registry it cannot poll, an exit on the signal pipe): refused before.
  const std::uint64_t needed = kFixedDescriptors + kDescriptorsPerNetworkThread * static_cast<std::uint64_t>(plan.server.threads + 1);
  if (plan.open_files < needed)
    return "the open-file limit is " + std::to_string(plan.open_files) + ", and crmd needs at least " + std::to_string(needed) +
           " with " + std::to_string(plan.server.threads) + " network threads: raise it (ulimit -n, or LimitNOFILE= in a systemd unit) or lower --threads";
  // Uploads stream to the data folder's file system, so that keeping one is a rename; into a
  // folder of this process's own, which servers sharing `--data` leave alone when they start.
  plan.uploads.emplace(files::UploadArea::Claim((std::filesystem::path(flags.data) / "tmp" / "uploads").string()));
  plan.server.upload_dir = plan.uploads->dir();
  if (auto wrong = PlanStores(flags, plan.server, plan.open_files, plan.stores)) return *wrong;
  if (auto wrong = PlanSettings(flags, cores, plan.settings)) return *wrong;
  if (auto wrong = PlanRouter(flags, cores, plan.router, plan.functions)) return *wrong;
  if (auto wrong = PlanTriggers(flags, plan.triggers)) return *wrong;
  if (auto wrong = PlanMetrics(flags, plan.metrics)) return *wrong;
  if (flags.request_log_days < 0) return std::string("--request-log-days must be 0 (keep) or more");
  plan.request_log.retention_days = flags.request_log_days;
  plan.request_log.max_apps_waiting = std::max<std::size_t>(1, plan.stores.max_open / 4);
  if (auto wrong = ShiftClockForTests()) return *wrong;
  return plan;
}

}  // namespace crmd::cli
