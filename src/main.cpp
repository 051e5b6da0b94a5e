// crmd command line. The subcommands and their output are a contract other tooling relies on:
//   crmd serve --data DIR --listen HOST:PORT [--prefix core] [--public-url URL] [--static-url URL]
//              [--signin-url URL]
//              [--threads N] [--write-threads N] [--durability full|normal] [--session-ttl SECONDS] [--lockout-minutes N]
//              [--smtp-url URL] [--mail-from ADDRESS] [--request-log-days N]
//   crmd app create --data DIR [--id APP_ID] [--name NAME] [--no-product-base]
//                                                             -> {"appId","masterKey","apiKey","apiKeyName"}
//   crmd app webhook-secret --data DIR --app APP_ID [--rotate] -> {"appId","webhookSecret"}
//   crmd app oauth-rotate --data DIR --app APP_ID             -> {"appId","rotated":true}
//   crmd files gc --data DIR --app APP_ID [--older-than 7d]   -> {"appId","removed":[names],"kept"}
//   crmd key create --data DIR --app APP_ID --name NAME       -> {"apiKey"}
//   crmd key revoke --data DIR --app APP_ID --name NAME
//   crmd key list   --data DIR --app APP_ID                   -> {"keys":[{"name","createdAt","revokedAt"}]}
#include <curl/curl.h>

#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "api/router.hpp"
#include "storage/sqlite/sqlite_store.hpp"
#include "cli/command_line.hpp"
#include "functions/lua_function.hpp"
#include "app/application.hpp"
#include "app/function_pool.hpp"
#include "auth/gates.hpp"
#include "auth/password_gate.hpp"
#include "auth/registry.hpp"
#include "http/server.hpp"
#include "logs/request_log.hpp"
#include "storage/database.hpp"
#include "storage/registry_store.hpp"
#include "storage/stores.hpp"
#include "storage/transfer.hpp"
#include "files/file_store.hpp"
#include "files/orphans.hpp"
#include "triggers/runner.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"
#include "util/log.hpp"
#include "util/phone.hpp"
#include "util/time.hpp"
#include "write/prepare_application.hpp"
#include "write/product_base.hpp"

namespace {

namespace json = boost::json;
using namespace crmd;

constexpr const char* kDefaultKeyName = "default";
constexpr std::size_t kMaxFunctionBytes = 1u << 20;  // source of one deployed function

// This invocation's --store: a PostgreSQL URL, or empty for SQLite files under --data.
std::string g_store_url;

// Where the registry is: the --store database, or `DATA/registry.db`.
std::string RegistryLocation(const std::string& data_dir) {
  std::filesystem::create_directories(data_dir);
  if (!g_store_url.empty()) return g_store_url;
  return (std::filesystem::path(data_dir) / "registry.db").string();
}

std::unique_ptr<storage::RegistryStore> OpenRegistryOf(const std::string& data_dir) {
  return storage::OpenRegistry(RegistryLocation(data_dir));
}

// The stores of a CLI command that opens applications: one reader, this invocation's --store.
app::StoreOptions AdminStores() {
  app::StoreOptions options{storage::Durability::kFull, 1};
  options.url = g_store_url;
  options.connections = 2;
  return options;
}

void Print(const json::value& v) { std::cout << ToJson(v) << std::endl; }

int Fail(const std::string& message) {
  std::cerr << "crmd: " << message << std::endl;
  return 1;
}

bool IsValidKeyName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  return true;
}


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

triggers::Runner::Options TriggerOptions(const cli::ServeFlags& flags) {
  triggers::Runner::Options options;
  options.threads = flags.trigger_threads;
  options.retries = flags.trigger_retries;
  options.retry_delay = std::chrono::milliseconds(flags.trigger_retry_delay_ms);
  options.webhook.allow_private = flags.allow_private_webhooks;
  if (const char* hold = std::getenv("CRMD_TRIGGER_HOLD_MS")) {
    options.hold = std::chrono::milliseconds(std::strtol(hold, nullptr, 10));
    log::Warn("trigger actions are held for testing", {{"hold_ms", options.hold.count()}});
  }
  return options;
}

// The trigger runner's doors: the registry, the stores, and the router's handlers.
triggers::Runner::Host TriggerHost(auth::Registry& registry, app::Applications& apps, api::Router& router) {
  triggers::Runner::Host host;
  host.open = [&](const std::string& app_id) -> std::shared_ptr<app::Application> {
    if (!registry.Find(app_id)) return nullptr;
    return apps.Open(app_id);
  };
  host.credentials = [&](const std::string& app_id) { return registry.Find(app_id); };
  host.dispatch = [&](auth::Context& ctx, std::string_view method, const std::string& target, const json::value* body) {
    return router.Dispatch(ctx, method, target, body);
  };
  host.run_function = [&](auth::Context& ctx, const std::string& name, const json::object& body,
                          const json::value& record) { return router.RunFunction(ctx, name, body, record); };
  host.has_pending = [&](const std::string& app_id) { return apps.HasPendingActivations(app_id); };
  return host;
}

int Serve(const cli::ServeFlags& flags) {
  auto colon = flags.listen.rfind(':');
  if (colon == std::string::npos) return Fail("--listen must be HOST:PORT");
  http::ServerOptions options;
  options.host = flags.listen.substr(0, colon);
  try {
    int port = std::stoi(flags.listen.substr(colon + 1));
    if (port < 0 || port > 65535) return Fail("--listen port out of range");
    options.port = static_cast<unsigned short>(port);
  } catch (const std::exception&) {
    return Fail("--listen must be HOST:PORT");
  }
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // glibc gives each thread its own malloc arena, up to 8 per core, and an arena keeps what was
  // freed in it: with twenty-odd threads that is most of the process's memory. Threads sharing a
  // few arenas cost a little locking and keep the process at a fraction of the size.
  mallopt(M_ARENA_MAX, cores * 2);
  // A page of results is a body of ~100 KiB built and freed per request. By default glibc hands
  // such blocks back to the kernel (mmap above 128 KiB, heap trimming on free) and faults them
  // in again on the next request: ~80 page faults and a quarter of a query's CPU. Keep up to a few
  // MiB around instead.
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  mallopt(M_TRIM_THRESHOLD, 8 << 20);
  mallopt(M_TOP_PAD, 1 << 20);
  // Reads run on the network threads; writes, which wait for their group's fsync, on their own.
  options.threads = flags.threads > 0 ? flags.threads : cores * 2;
  options.write_threads = flags.write_threads > 0 ? flags.write_threads : cores * 8;
  options.upload_path_prefix = "/" + flags.prefix + "/files/";
  // Uploads stream to the data folder's file system, so that keeping one is a rename.
  options.upload_dir = (std::filesystem::path(flags.data) / "tmp" / "uploads").string();
  files::ClearUploads(options.upload_dir);  // what uploads a crash cut short left
  if (flags.max_file_size_mib < 0) return Fail("--max-file-size must be 0 (no cap) or more");
  if (flags.max_file_size_mib > 0) options.upload_body_limit = static_cast<std::uint64_t>(flags.max_file_size_mib) << 20;
  if (flags.upload_min_rate < 0 || flags.upload_timeout <= 0 || flags.upload_rate < 0)
    return Fail("--upload-min-rate and --upload-rate must be 0 (no limit) or more, --upload-timeout positive");
  options.upload_min_rate = static_cast<std::uint64_t>(flags.upload_min_rate);
  options.upload_timeout = std::chrono::seconds(flags.upload_timeout);
  if (flags.request_timeout <= 0 || flags.idle_timeout <= 0 || flags.drain_timeout <= 0)
    return Fail("--request-timeout, --idle-timeout and --drain-timeout must be positive");
  options.drain_timeout = std::chrono::seconds(flags.drain_timeout);
  options.request_timeout = std::chrono::seconds(flags.request_timeout);
  options.idle_timeout = std::chrono::seconds(flags.idle_timeout);
  // Every connection and every open store holds descriptors: take all the system allows.
  const std::uint64_t open_files = RaiseOpenFileLimit();
  if (flags.max_connections < 0) return Fail("--max-connections must be positive");
  options.max_connections = flags.max_connections > 0
                                ? flags.max_connections
                                : static_cast<int>(std::clamp<std::uint64_t>(open_files / 4, 16, 10'000));

  app::StoreOptions store;
  store.durability = flags.durability == "normal" ? storage::Durability::kNormal
                                                  : storage::Durability::kFull;
  // Idle reader connections kept: one per thread that reads; more are opened when a request needs
  // two at once, and closed when they come back.
  store.readers = options.threads + options.write_threads;
  // What connections leave of the open-file limit, at ~16 descriptors per store (a writer, a few
  // readers, each with its log).
  if (flags.max_open_apps < 0 || flags.page_cache_mib <= 0) return Fail("--max-open-apps and --page-cache-mib must be positive");
  store.max_open = flags.max_open_apps > 0
                       ? static_cast<std::size_t>(flags.max_open_apps)
                       : std::clamp<std::uint64_t>((open_files - std::min<std::uint64_t>(open_files, options.max_connections)) / 16, 16, 1000);
  storage::LimitPageCache(static_cast<std::int64_t>(flags.page_cache_mib) << 20);
  store.url = flags.store;
  {
    // Stable across restarts, distinct between the servers of one host (their addresses differ).
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    store.instance = std::string(host) + " " + flags.listen + " " + std::filesystem::absolute(flags.data).string();
  }
  // A connection for each thread that may hold one, and as many again for the requests that
  // hold two at once (a streaming find and the lookups of its includes).
  store.connections = static_cast<std::size_t>(2 * (options.threads + options.write_threads + flags.trigger_threads) + 4);

  if (flags.session_ttl <= 0 || flags.lockout_minutes <= 0)
    return Fail("--session-ttl and --lockout-minutes must be positive");
  app::Settings settings;
  settings.session_ttl = std::chrono::seconds(flags.session_ttl);
  settings.lockout = std::chrono::minutes(flags.lockout_minutes);
  settings.prefix = flags.prefix;
  settings.smtp_url = flags.smtp_url;
  settings.mail_from = flags.mail_from;
  if (flags.reset_mails_per_hour < 0 || flags.password_slots < 0 || flags.password_rate <= 0)
    return Fail("--reset-mails-per-hour, --password-slots and --password-rate must be positive");
  settings.reset_mails_per_hour = flags.reset_mails_per_hour;
  auth::PasswordGate::Limits password_limits;
  password_limits.slots = flags.password_slots > 0 ? flags.password_slots : cores;
  password_limits.per_ip_per_second = flags.password_rate / 60.0;
  password_limits.per_ip_burst = flags.password_rate;
  auth::PasswordGate::Configure(password_limits);

  if (flags.read_timeout <= 0 || flags.read_slice_ms <= 0) return Fail("--read-timeout and --read-slice-ms must be positive");
  if (flags.request_log_days < 0) return Fail("--request-log-days must be 0 (keep) or more");
  // A test seam (util/time.hpp): end-to-end tests start a server days later to see retention.
  if (const char* offset = std::getenv("CRMD_TEST_CLOCK_OFFSET_MS")) {
    std::int64_t millis = 0;
    try {
      millis = std::stoll(offset);
    } catch (const std::exception&) {
      return Fail("CRMD_TEST_CLOCK_OFFSET_MS must be a number of milliseconds");
    }
    timeutil::SetClockOffset(millis);
    log::Warn("the clock is shifted for testing", {{"offset_ms", millis}});
  }

  auth::Registry registry(RegistryLocation(flags.data));
  registry.StartWatching();
  // Outlives the stores: a write committed as they close hands it its activations (it takes
  // none once stopped; they stay in the outboxes).
  std::optional<triggers::Runner> trigger_runner;
  app::Applications apps(flags.data, store, settings, write::PrepareApplication);
  apps.SetRegionSource([&registry](const std::string& app_id) {
    auto credentials = registry.Find(app_id);
    return credentials ? credentials->region : std::string(app::kDefaultPhoneRegion);
  });
  logs::RequestLog::Options log_options;
  log_options.retention_days = flags.request_log_days;
  log_options.max_apps_waiting = std::max<std::size_t>(1, store.max_open / 4);
  logs::RequestLog request_log(apps, log_options);  // stopped (flushed) before the write queues
  api::RouterOptions router_options;
  router_options.prefix = flags.prefix;
  router_options.read_timeout = std::chrono::seconds(flags.read_timeout);
  router_options.read_slice = std::chrono::milliseconds(flags.read_slice_ms);
  if (flags.function_memory_mib <= 0 || flags.function_instructions <= 0)
    return Fail("--function-memory-mib and --function-instructions must be positive");
  router_options.function_limits.memory_bytes = static_cast<std::size_t>(flags.function_memory_mib) << 20;
  router_options.function_limits.instructions = flags.function_instructions;
  if (flags.function_timeout_ms <= 0 || flags.function_threads < 0 || flags.function_threads_per_app < 1 ||
      flags.form_calls_per_minute < 0)
    return Fail("--function-timeout-ms and --function-threads-per-app must be positive, --function-threads and "
                "--form-calls-per-minute 0 or more");
  router_options.function_limits.time = std::chrono::milliseconds(flags.function_timeout_ms);
  router_options.function_calls_per_minute = flags.form_calls_per_minute;
  app::FunctionPool::Options pool_options;
  pool_options.threads = flags.function_threads > 0 ? flags.function_threads : 2 * cores;
  pool_options.per_app = flags.function_threads_per_app;
  // Stopped once the server stopped, while the router and the server are still there: its calls
  // run the router and answer through the server (StopWritesFirst).
  app::FunctionPool function_pool(pool_options);
  router_options.function_pool = &function_pool;
  if (flags.signin_rate < 0) return Fail("--signin-rate must be 0 (no limit) or more");
  router_options.signin_per_minute = flags.signin_rate;
  router_options.upload_rate = flags.upload_rate;
  api::Router router(router_options, registry, apps, &request_log);
  if (flags.trigger_retries < 0 || flags.trigger_retry_delay_ms < 0 || flags.trigger_threads < 1)
    return Fail("--trigger-retries and --trigger-retry-delay must be 0 or more, --trigger-threads 1 or more");
  auto trigger_host = TriggerHost(registry, apps, router);
  trigger_host.function_slot = [&function_pool](const std::string& app_id) { return function_pool.TryEnter(app_id); };
  trigger_runner.emplace(std::move(trigger_host), TriggerOptions(flags));
  apps.SetActivationSink(&*trigger_runner);
  // Its threads use the router and the stores: stopped before either goes, however this ends.
  struct StopTriggers {
    triggers::Runner& runner;
    ~StopTriggers() { runner.Stop(); }
  } stop_triggers{*trigger_runner};
  trigger_runner->Recover(apps.StoredApplications());  // what a crash or a stop left to run
  log::AccessLogBatching access_log_batching;
  options.drain_expired = [] { storage::ReadDeadline::EndAll(); };
  options.short_of_descriptors = [&apps] { apps.Relieve(); };
  options.unwrap = [&router](api::Request& r) { return router.Unwrap(r); };
  http::Server server(
      options, [&router](const api::Request& r) { return router.Handle(r); },
      [&router](api::Request& r, std::function<void(api::Response)>& done) { return router.QueueWrite(r, done); },
      [&router](const api::Request& head) { return router.Early(head); });
  const unsigned short port = server.Listen();
  std::string public_url = flags.public_url;
  if (public_url.empty()) public_url = "http://" + options.host + ":" + std::to_string(port);
  while (!public_url.empty() && public_url.back() == '/') public_url.pop_back();
  std::string static_url = flags.static_url;
  while (!static_url.empty() && static_url.back() == '/') static_url.pop_back();
  apps.SetPublicUrl(public_url, static_url, flags.signin_url);
  log::Info("listening", {{"address", options.host},
                          {"max_connections", options.max_connections},
                          {"max_open_apps", static_cast<std::int64_t>(store.max_open)},
                          {"open_files", static_cast<std::int64_t>(open_files)},
                          {"port", port},
                          {"threads", options.threads},
                          {"write_threads", options.write_threads},
                          {"durability", flags.durability},
                          {"prefix", flags.prefix}});
  {
    // Before the server and the router go, however Run() ends: a queued write still running
    // uses the router and answers through the server's contexts.
    struct StopWritesFirst {
      app::FunctionPool& function_pool;
      triggers::Runner& trigger_runner;
      logs::RequestLog& request_log;
      app::Applications& apps;
      ~StopWritesFirst() {
        try {
          function_pool.Stop();  // a call still running finishes; the waiting ones are dropped
          trigger_runner.Stop();  // what it has not run stays in the outboxes, for the next start
          request_log.Stop();  // the rows of the last requests, into the queues while they run
          apps.StopWrites();
        } catch (const std::exception& e) {
          log::Error("stopping the write queues failed", {{"error", e.what()}});
        }
      }
    } stop_writes_first{function_pool, *trigger_runner, request_log, apps};
    server.Run();
  }
  registry.StopWatching();
  log::Info("stopped");
  return 0;
}

// The gates a profile and the single gates named after it give, starting from `gates`; the
// error a person reads when a name or value is unknown.
std::optional<std::string> ApplyGates(auth::Gates& gates, const cli::AdminArgs& args) {
  auto classes = gates.web2table_classes;  // an operator's choice, not a profile's
  const std::int64_t file_quota_mib = gates.file_quota_mib;  // a limit, not a gate: a profile keeps it
  if (args.profile == "parse") gates = auth::Gates::Parse();
  else if (args.profile == "crmd") gates = auth::Gates{};
  else if (!args.profile.empty()) return "--profile takes crmd or parse";
  gates.web2table_classes = std::move(classes);
  gates.file_quota_mib = file_quota_mib;
  for (const auto& [name, value] : args.gates)
    if (!value.empty())
      if (auto error = auth::SetGate(gates, name, value)) return error;
  return std::nullopt;
}

int CreateApp(const std::string& data, std::string app_id, const std::string& name, bool product_base,
              std::string region, const cli::AdminArgs& args) {
  auth::Gates gates;
  if (auto error = ApplyGates(gates, args)) return Fail(*error);
  if (app_id.empty()) app_id = ids::RandomAlnum(20);
  if (!app::IsValidAppId(app_id)) return Fail("--id must be 1-64 of [A-Za-z0-9_-]");
  if (region.empty()) region = app::kDefaultPhoneRegion;
  if (!phone::IsKnownRegion(region)) return Fail("--region must be an ISO 3166 region with phone numbers, such as IL or US");
  const std::string master = ids::NewSecret(), api_key = ids::NewSecret(), now = timeutil::NowIso();
  storage::AppRecord record{app_id, name.empty() ? app_id : name, ids::HashSecret(master), now,
                            {{kDefaultKeyName, ids::HashSecret(api_key), now, std::nullopt}}, region, {}, {}, {},
                            gates == auth::Gates{} ? std::string() : ToJson(auth::GatesObject(gates))};
  auto registry_store = OpenRegistryOf(data);
  auto& store = *registry_store;
  if (store.Load(app_id)) return Fail("application " + app_id + " already exists");
  // The store is complete before the registry names the application, so a running server never
  // serves it half-loaded. A store left by an interrupted create is not an application: replace it.
  const auto dir = std::filesystem::path(data) / "apps" / app_id;
  const app::StoreOptions options = AdminStores();
  auto remove_store = [&] {
    std::filesystem::remove_all(dir);
    if (!options.url.empty()) storage::PostgresStores(options.url, 1)->Remove(app_id);
  };
  remove_store();
  try {
    app::Applications apps(data, options, {}, write::PrepareApplication);
    apps.SetRegionSource([&region](const std::string&) { return region; });
    auto app = apps.Open(app_id);
    if (product_base) write::LoadProductBase(*app);
  } catch (...) {
    remove_store();
    throw;
  }
  if (store.CreateApp(record) == storage::RegistryChange::kAlreadyExists)
    return Fail("application " + app_id + " already exists");
  Print(json::object{{"appId", app_id}, {"masterKey", master}, {"apiKey", api_key},
                     {"apiKeyName", kDefaultKeyName}, {"gates", auth::GatesObject(gates)}});
  return 0;
}

int SetRegion(const std::string& data, const std::string& app_id, const std::string& region) {
  if (!phone::IsKnownRegion(region)) return Fail("--region must be an ISO 3166 region with phone numbers, such as IL or US");
  auto registry_store = OpenRegistryOf(data);
  auto& store = *registry_store;
  // A running server sees it within a second and computes the application's phone keys again.
  if (store.SetRegion(app_id, region) != storage::RegistryChange::kDone) return Fail("no application " + app_id);
  Print(json::object{{"appId", app_id}, {"region", region}});
  return 0;
}

int SetGates(const std::string& data, const std::string& app_id, const cli::AdminArgs& args) {
  auto registry_store = OpenRegistryOf(data);
  auto& store = *registry_store;
  auto app = store.Load(app_id);
  if (!app) return Fail("no application " + app_id);
  auth::Gates gates = auth::GatesFrom(app->gates);
  if (auto error = ApplyGates(gates, args)) return Fail(*error);
  const json::object shown = auth::GatesObject(gates);
  // A running server follows within a second (the registry's poll).
  if (store.SetGates(app_id, ToJson(shown)) != storage::RegistryChange::kDone) return Fail("no application " + app_id);
  Print(json::object{{"appId", app_id}, {"gates", shown}});
  return 0;
}

int WebhookSecret(const std::string& data, const std::string& app_id, bool rotate) {
  auto registry_store = OpenRegistryOf(data);
  auto& store = *registry_store;
  // A running server signs with a rotated secret within a second.
  if (rotate && store.SetWebhookSecret(app_id, storage::NewWebhookSecret()) != storage::RegistryChange::kDone)
    return Fail("no application " + app_id);
  auto app = store.Load(app_id);
  if (!app) return Fail("no application " + app_id);
  Print(json::object{{"appId", app_id}, {"webhookSecret", app->webhook_secret}});
  return 0;
}

// The stores of this invocation, opened without the application layer (no system classes are
// made): for `app export` and `app import`, which copy a store as it is.
std::unique_ptr<storage::Stores> AdminStoresRaw(const std::string& data) {
  if (g_store_url.empty()) return storage::SqliteStores(data, storage::Durability::kFull, 1);
  return storage::PostgresStores(g_store_url, 2);
}

json::object RegistryJson(const storage::AppRecord& app) {
  json::array keys, functions;
  for (const auto& k : app.api_keys)
    keys.push_back(json::object{{"name", k.name}, {"keyHash", k.key_hash}, {"createdAt", k.created_at},
                                {"revokedAt", k.revoked_at ? json::value(*k.revoked_at) : json::value(nullptr)}});
  for (const auto& f : app.functions)
    functions.push_back(json::object{{"name", f.name}, {"code", f.code}, {"deployedAt", f.deployed_at}});
  return json::object{{"name", app.name},           {"masterKeyHash", app.master_key_hash},
                      {"createdAt", app.created_at}, {"region", app.region},
                      {"webhookSecret", app.webhook_secret}, {"oauthSecret", app.oauth_secret},
                      {"apiKeys", std::move(keys)},  {"functions", std::move(functions)},
                      {"gates", app.gates}};
}

storage::AppRecord RegistryRecord(const std::string& app_id, const json::object& o) {
  auto text = [&](const json::object& from, const char* key) { return std::string(from.at(key).as_string()); };
  storage::AppRecord app;
  app.app_id = app_id;
  app.name = text(o, "name");
  app.master_key_hash = text(o, "masterKeyHash");
  app.created_at = text(o, "createdAt");
  app.region = text(o, "region");
  app.webhook_secret = text(o, "webhookSecret");
  app.oauth_secret = text(o, "oauthSecret");
  if (const auto* gates = o.if_contains("gates"); gates && gates->is_string()) app.gates = std::string(gates->get_string());
  for (const auto& k : o.at("apiKeys").as_array()) {
    const auto& key = k.as_object();
    storage::ApiKeyRecord record{text(key, "name"), text(key, "keyHash"), text(key, "createdAt"), std::nullopt};
    if (key.at("revokedAt").is_string()) record.revoked_at = text(key, "revokedAt");
    app.api_keys.push_back(std::move(record));
  }
  for (const auto& f : o.at("functions").as_array())
    app.functions.push_back({text(f.as_object(), "name"), text(f.as_object(), "code"), text(f.as_object(), "deployedAt")});
  return app;
}

json::object CountsJson(const std::string& app_id, const storage::TransferCounts& counts) {
  json::object rows;
  for (const auto& [name, n] : counts.rows) rows[name] = n;
  return json::object{{"appId", app_id}, {"rows", std::move(rows)}, {"relations", counts.relations}, {"outbox", counts.outbox}};
}

int ExportApp(const std::string& data, const std::string& app_id, const std::string& file) {
  auto registry_store = OpenRegistryOf(data);
  const auto app = registry_store->Load(app_id);
  if (!app) return Fail("no application " + app_id);
  auto db = AdminStoresRaw(data)->Open(app_id);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) return Fail("cannot write " + file);
  try {
    const auto counts = storage::ExportStore(*db, json::object{{"appId", app_id}, {"registry", RegistryJson(*app)}}, out);
    out.close();
    if (!out) throw std::runtime_error("cannot write " + file);
    Print(CountsJson(app_id, counts));
  } catch (...) {
    std::filesystem::remove(file);
    throw;
  }
  return 0;
}

int ImportApp(const std::string& data, const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Fail("cannot read " + file);
  std::string first;
  std::getline(in, first);
  auto header = ParseJson(first);
  if (!header.ok() || !header.value().is_object() || !header.value().as_object().if_contains("appId"))
    return Fail(file + " is not an export of crmd app export");
  const std::string app_id(header.value().as_object().at("appId").as_string());
  if (!app::IsValidAppId(app_id)) return Fail("the export names an invalid application id");
  auto registry_store = OpenRegistryOf(data);
  if (registry_store->Load(app_id)) return Fail("application " + app_id + " already exists");
  in.seekg(0);
  // As `app create`: the store is complete before the registry names the application; a store
  // left by an interrupted import is not an application, and is replaced.
  auto stores = AdminStoresRaw(data);
  stores->Remove(app_id);
  json::object read_header;
  storage::TransferCounts counts;
  try {
    auto db = stores->Open(app_id);
    counts = storage::ImportStore(*db, in, read_header);
  } catch (...) {
    stores->Remove(app_id);
    throw;
  }
  if (registry_store->CreateApp(RegistryRecord(app_id, read_header.at("registry").as_object())) !=
      storage::RegistryChange::kDone)
    return Fail("application " + app_id + " already exists");
  Print(CountsJson(app_id, counts));
  return 0;
}

// A new OAuth secret: every client registration and token of the application's MCP sign-in ends
// (a running server sees it within a second).
int OAuthRotate(const std::string& data, const std::string& app_id) {
  auto registry_store = OpenRegistryOf(data);
  auto& store = *registry_store;
  if (store.SetOAuthSecret(app_id, storage::NewWebhookSecret()) != storage::RegistryChange::kDone)
    return Fail("no application " + app_id);
  Print(json::object{{"appId", app_id}, {"rotated", true}});
  return 0;
}

// Spec §4.9: the form functions' names are crmd's own.
bool IsBuiltinFunction(std::string_view name) {
  return name == "getlead" || name == "web2table" || name == "web2case" || name == "web2sale";
}

int DeployFunction(const std::string& data, const std::string& app_id, const std::string& name, const std::string& file) {
  if (!IsValidKeyName(name)) return Fail("--name must be 1-64 of [A-Za-z0-9._-]");
  if (IsBuiltinFunction(name)) return Fail(name + " is a built-in form function and cannot be replaced");
  std::ifstream in(file, std::ios::binary);
  if (!in) return Fail("cannot read " + file);
  std::string code((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (code.size() > kMaxFunctionBytes) return Fail("a function may hold at most 1 MiB of source");
  if (auto wrong = functions::CheckLua(name, code)) return Fail("the function does not compile: " + *wrong);
  auto registry_store = OpenRegistryOf(data);
  auto& store = *registry_store;
  // A running server sees it within a second.
  if (store.DeployFunction(app_id, {name, code, timeutil::NowIso()}) != storage::RegistryChange::kDone)
    return Fail("no application " + app_id);
  Print(json::object{{"appId", app_id}, {"deployed", name}, {"bytes", static_cast<std::int64_t>(code.size())}});
  return 0;
}

int ListFunctions(const std::string& data, const std::string& app_id) {
  auto registry_store = OpenRegistryOf(data);
  auto& store = *registry_store;
  auto app = store.Load(app_id);
  if (!app) return Fail("no application " + app_id);
  json::array list;
  for (const auto& f : app->functions)
    list.push_back(json::object{{"name", f.name}, {"deployedAt", f.deployed_at}, {"bytes", static_cast<std::int64_t>(f.code.size())}});
  Print(json::object{{"appId", app_id}, {"functions", std::move(list)}});
  return 0;
}

int RemoveFunction(const std::string& data, const std::string& app_id, const std::string& name) {
  auto registry_store = OpenRegistryOf(data);
  auto& store = *registry_store;
  switch (store.RemoveFunction(app_id, name)) {
    case storage::RegistryChange::kNoSuchApp: return Fail("no application " + app_id);
    case storage::RegistryChange::kNoSuchKey: return Fail("no function named " + name);
    default: break;
  }
  Print(json::object{{"appId", app_id}, {"removed", name}});
  return 0;
}

// `<n>d`, `<n>h`, `<n>m` or `<n>s`.
std::optional<std::chrono::seconds> ParseAge(const std::string& text) {
  if (text.size() < 2 || text.size() > 12) return std::nullopt;
  std::int64_t n = 0;
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    n = n * 10 + (text[i] - '0');
  }
  switch (text.back()) {
    case 'd': return std::chrono::seconds(n * 86400);
    case 'h': return std::chrono::seconds(n * 3600);
    case 'm': return std::chrono::seconds(n * 60);
    case 's': return std::chrono::seconds(n);
    default: return std::nullopt;
  }
}

int CollectFiles(const std::string& data, const std::string& app_id, const std::string& older_than) {
  const auto age = ParseAge(older_than);
  if (!age) return Fail("--older-than must be <n>d, <n>h, <n>m or <n>s");
  auto registry_store = OpenRegistryOf(data);
  auto& store = *registry_store;
  if (!store.Load(app_id)) return Fail("no application " + app_id);
  app::Applications apps(data, AdminStores(), {}, write::PrepareApplication);
  auto app = apps.Open(app_id);
  const auto collected = files::RemoveOrphans(*app, *age);
  json::array removed;
  for (const auto& name : collected.removed) removed.emplace_back(name);
  Print(json::object{{"appId", app_id}, {"removed", std::move(removed)}, {"kept", static_cast<std::int64_t>(collected.kept)}});
  return 0;
}

int CreateKey(const std::string& data, const std::string& app_id, const std::string& name) {
  if (!IsValidKeyName(name)) return Fail("--name must be 1-64 of [A-Za-z0-9._-]");
  const std::string key = ids::NewSecret();
  auto registry_store = OpenRegistryOf(data);
  auto& store = *registry_store;
  switch (store.AddApiKey(app_id, {name, ids::HashSecret(key), timeutil::NowIso(), std::nullopt})) {
    case storage::RegistryChange::kNoSuchApp: return Fail("no application " + app_id);
    case storage::RegistryChange::kAlreadyExists: return Fail("an active key named " + name + " exists");
    default: break;
  }
  Print(json::object{{"apiKey", key}});
  return 0;
}

int RevokeKey(const std::string& data, const std::string& app_id, const std::string& name) {
  auto registry_store = OpenRegistryOf(data);
  auto& store = *registry_store;
  if (!store.Load(app_id)) return Fail("no application " + app_id);
  if (store.RevokeApiKey(app_id, name, timeutil::NowIso()) != storage::RegistryChange::kDone)
    return Fail("no active key named " + name);
  Print(json::object{{"revoked", name}});
  return 0;
}

int ListKeys(const std::string& data, const std::string& app_id) {
  auto registry_store = OpenRegistryOf(data);
  auto& store = *registry_store;
  auto app = store.Load(app_id);
  if (!app) return Fail("no application " + app_id);
  json::array keys;
  for (const auto& k : app->api_keys) {
    json::object o{{"name", k.name}, {"createdAt", k.created_at}};
    o["revokedAt"] = k.revoked_at ? json::value(*k.revoked_at) : json::value(nullptr);
    keys.push_back(std::move(o));
  }
  Print(json::object{{"appId", app_id}, {"keys", std::move(keys)}});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ids::Init();
  curl_global_init(CURL_GLOBAL_DEFAULT);  // before any thread: libcurl's global state is not thread-safe
  auto parsed = cli::ParseCommandLine(argc, argv);
  if (const int* exit_code = std::get_if<int>(&parsed)) return *exit_code;
  const cli::Command& command = std::get<cli::Command>(parsed);
  const cli::AdminArgs& a = command.admin;
  g_store_url = command.kind == cli::CommandKind::kServe ? command.serve.store : a.store;
  if (!g_store_url.empty() && !storage::IsPostgresUrl(g_store_url))
    return Fail("--store must be a postgresql:// URL (SQLite, the default, needs none)");
  try {
    switch (command.kind) {
      case cli::CommandKind::kServe: return Serve(command.serve);
      case cli::CommandKind::kAppCreate: return CreateApp(a.data, a.app_id, a.name, !a.no_product_base, a.region, a);
      case cli::CommandKind::kAppSet: return SetGates(a.data, a.app_id, a);
      case cli::CommandKind::kAppExport: return ExportApp(a.data, a.app_id, a.file);
      case cli::CommandKind::kAppImport: return ImportApp(a.data, a.file);
      case cli::CommandKind::kAppRegion: return SetRegion(a.data, a.app_id, a.region);
      case cli::CommandKind::kAppWebhookSecret: return WebhookSecret(a.data, a.app_id, a.rotate);
      case cli::CommandKind::kAppOAuthRotate: return OAuthRotate(a.data, a.app_id);
      case cli::CommandKind::kFilesGc: return CollectFiles(a.data, a.app_id, a.older_than);
      case cli::CommandKind::kKeyCreate: return CreateKey(a.data, a.app_id, a.name);
      case cli::CommandKind::kKeyRevoke: return RevokeKey(a.data, a.app_id, a.name);
      case cli::CommandKind::kKeyList: return ListKeys(a.data, a.app_id);
      case cli::CommandKind::kFunctionDeploy: return DeployFunction(a.data, a.app_id, a.name, a.file);
      case cli::CommandKind::kFunctionList: return ListFunctions(a.data, a.app_id);
      case cli::CommandKind::kFunctionRemove: return RemoveFunction(a.data, a.app_id, a.name);
    }
  } catch (const std::exception& e) {
    log::Error("fatal", {{"error", e.what()}});
    return 1;
  }
  return 1;
}
