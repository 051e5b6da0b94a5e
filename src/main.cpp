// crmd's composition root: `crmd serve` puts the server's parts together (cli/serve_plan.hpp
// checks the flags and sizes the parts); the admin commands are cli/'s (cli/commands.hpp). The
// command line's grammar and answers are in the README.
#include <boost/system/system_error.hpp>

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <system_error>
#include <thread>

#include "api/live_connection.hpp"
#include "api/live_hub.hpp"
#include "api/router.hpp"
#include "app/application.hpp"
#include "app/function_pool.hpp"
#include "auth/registry.hpp"
#include "cli/admin.hpp"
#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "cli/data_dir_lock.hpp"
#include "cli/serve_plan.hpp"
#include "http/server.hpp"
#include "logs/request_log.hpp"
#include "metrics/metrics.hpp"
#include "storage/read_deadline.hpp"
#include "storage/registry_store.hpp"
#include "storage/storage_error.hpp"
#include "storage/stores.hpp"
#include "triggers/runner.hpp"
#include "util/ids.hpp"
#include "util/log.hpp"
#include "util/version.hpp"
#include "write/prepare_application.hpp"

namespace {

namespace json = boost::json;
using namespace crmd;

// The trigger runner's doors: the registry, the stores, the router's handlers and the share of
// function threads.
triggers::Runner::Host TriggerHost(auth::Registry& registry, app::Applications& apps, api::Router& router,
                                   app::FunctionPool& functions) {
  triggers::Runner::Host host;
  host.open = [&](const std::string& app_id) -> std::shared_ptr<app::Application> {
    if (!registry.Find(app_id)) return nullptr;
    return apps.Open(app_id);
  };
  host.credentials = [&](const std::string& app_id) { return registry.Find(app_id); };
  host.dispatch = [&](auth::Context& ctx, std::string_view method, const std::string& target, const json::value* body) {
    return router.DispatchText(ctx, method, target, body);
  };
  host.run_function = [&](auth::Context& ctx, const std::string& name, const json::object& body,
                          const json::value& record) { return router.RunFunction(ctx, name, body, record); };
  host.has_pending = [&](const std::string& app_id) { return apps.HasPendingActivations(app_id); };
  host.function_slot = [&](const std::string& app_id) { return functions.TryEnter(app_id); };
  return host;
}

// Set once the server says it listens: a failure before is the person's to fix (one sentence,
// issue 35), one after is logged as a fault.
bool g_listening = false;

// A failure at start, in a sentence for the person who started the server.
std::string StartupFailure(const std::exception& e) {
  int error = 0;
  if (const auto* system = dynamic_cast<const std::system_error*>(&e)) error = system->code().value();
  // Boost's message names its own source line: the reason alone is kept.
  if (const auto* boost_error = dynamic_cast<const boost::system::system_error*>(&e)) error = boost_error->code().value();
  if (error == EMFILE || error == ENFILE)
    return "out of file descriptors while starting (the open-file limit is " + std::to_string(cli::OpenFileLimit()) +
           "): raise it (ulimit -n, or LimitNOFILE= in a systemd unit) or lower --threads";
  if (const auto* boost_error = dynamic_cast<const boost::system::system_error*>(&e)) return boost_error->code().message();
  return e.what();
}

// The /metrics listener's one answer (metrics/metrics.hpp).
api::Response AnswerMetrics(const api::Request& request) {
  if (request.target != "/metrics" || (request.method != api::Method::kGet && request.method != api::Method::kHead))
    return api::JsonResponse(404, json::object{{"error", "GET /metrics is all there is here"}});
  api::Response r;
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  r.body = metrics::Scrape();
  return r;
}

// What /metrics measures at a scrape rather than counts as it happens.
void SampleProcess(app::Applications& apps, const auth::Registry& registry, triggers::Runner& trigger_runner) {
  metrics::Set(metrics::Gauge::kTriggersHeld, static_cast<double>(trigger_runner.Held()));
  metrics::Set(metrics::Gauge::kTriggerOldestHeld, std::chrono::duration<double>(trigger_runner.OldestHeld()).count());
  metrics::Set(metrics::Gauge::kOpenStores, static_cast<double>(apps.open_count()));
  metrics::Set(metrics::Gauge::kWritesQueued, static_cast<double>(apps.queued_writes()));
  std::error_code ec;
  double fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec))
    ++fds;
  metrics::Set(metrics::Gauge::kDescriptors, fds);
  metrics::Set(metrics::Gauge::kDescriptorLimit, static_cast<double>(cli::OpenFileLimit()));
  long pages = 0, resident = 0;
  if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(statm, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(statm);
  }
  metrics::Set(metrics::Gauge::kResidentBytes, static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)));
  metrics::Set(metrics::Gauge::kRegistryUp, registry.Healthy() ? 1 : 0);
}

int Serve(const cli::ServeFlags& flags) {
  if (flags.data.empty()) return cli::Fail("--data is required (or data = \"...\" in the --config file, or CRMD_DATA)");
  // Before anything touches the data directory: a second server on it would share its stores.
  if (flags.store.empty())
    if (auto wrong = cli::LockDataDir(flags.data)) return cli::Fail(*wrong);
  auto planned = cli::PlanServe(flags);
  if (const auto* wrong = std::get_if<std::string>(&planned)) return cli::Fail(*wrong);
  cli::ServePlan& plan = std::get<cli::ServePlan>(planned);

  std::optional<auth::Registry> registry_holder;
  const std::string registry_location = cli::RegistryLocation(flags.data);
  try {
    registry_holder.emplace(registry_location);
  } catch (const storage::StorageError& e) {
    // The URL may carry a password: the data directory is named instead.
    throw std::runtime_error("cannot read the registry of " + (flags.store.empty() ? registry_location : "--store") + ": " + e.what());
  }
  auth::Registry& registry = *registry_holder;
  // Outlives the stores: a write committed as they close hands it its activations (it takes
  // none once stopped; they stay in the outboxes).
  std::optional<triggers::Runner> trigger_runner;
  app::Applications apps(flags.data, plan.stores, plan.settings, write::PrepareApplication);
  apps.SetRegionSource([&registry](const std::string& app_id) {
    auto credentials = registry.Find(app_id);
    return credentials ? credentials->region : std::string(app::kDefaultPhoneRegion);
  });
  registry.OnRemoved([&apps](const std::string& app_id) { apps.Forget(app_id); });
  registry.StartWatching();
  // Its thread calls into the stores: stopped before they go, however this ends.
  struct StopRegistryWatch {
    auth::Registry& registry;
    ~StopRegistryWatch() { registry.StopWatching(); }
  } stop_registry_watch{registry};
  logs::RequestLog request_log(apps, plan.request_log);  // stopped (flushed) before the write queues
  // Stopped once the server stopped, while the router and the server are still there: its calls
  // run the router and answer through the server (StopWritesFirst).
  app::FunctionPool function_pool(plan.functions);
  plan.router.function_pool = &function_pool;
  api::Router router(plan.router, registry, apps, &request_log);
  // Issue 36: LiveQuery subscribers hear of durable writes; stopped (its threads read through the
  // router) before the router goes.
  api::LiveHub live_hub(router, registry, apps.SharedStores());
  apps.SetChangeSink(&live_hub);
  router.SetLive(&live_hub);
  // Several servers on one PostgreSQL database: every committed write reaches the subscribers of
  // each (this one's included) through the store's announcements.
  if (apps.SharedStores())
    apps.WatchRecords([&live_hub, &apps](std::string_view payload) {
      auto change = app::DecodeChange(payload);
      if (!change) return;
      // The record's class or field may be new: the schema listener, on a thread of its own,
      // may not have reloaded it yet, and the subscribers' reads need it now.
      if (change->schema_changed) apps.SchemaChanged(change->app_id);
      live_hub.Changed(std::move(*change));
    });
  struct StopLiveAnnouncements {
    app::Applications& apps;
    ~StopLiveAnnouncements() { apps.StopWatchingRecords(); }
  } stop_live_announcements{apps};
  trigger_runner.emplace(TriggerHost(registry, apps, router, function_pool), plan.triggers);
  apps.SetActivationSink(&*trigger_runner);
  // Its threads use the router and the stores: stopped before either goes, however this ends.
  struct StopTriggers {
    triggers::Runner& runner;
    ~StopTriggers() { runner.Stop(); }
  } stop_triggers{*trigger_runner};
  // Other servers on the database: this one is alive to them before it claims anything.
  if (auto* shared = apps.outbox_takeover()) trigger_runner->TakeOver(*shared);
  trigger_runner->Recover(apps.StoredApplications());  // what a crash or a stop left to run
  log::AccessLogBatching access_log_batching;
  http::ServerOptions& options = plan.server;
  options.drain_expired = [] { storage::ReadDeadline::EndAll(); };
  options.short_of_descriptors = [&apps] { apps.Relieve(); };
  options.unwrap = [&router](api::Request& r) { return router.Unwrap(r); };
  options.upgrade = api::LiveQueryUpgrade(router, live_hub);
  options.body_of = [&router](api::Method method, std::string_view target) { return router.BodyOf(method, target); };
  options.family_of = [&router](api::Method method, std::string_view target) { return router.FamilyOf(method, target); };
  http::Server server(
      options, [&router](const api::Request& r) { return router.Handle(r); },
      [&router](api::Request& r, std::function<void(api::Response)>& done) { return router.QueueWrite(r, done); },
      [&router](const api::Request& head) { return router.Early(head); });
  const unsigned short port = server.Listen();
  // The metrics listener: bound before the server says it listens; run on a thread of its own,
  // it stops on the same SIGTERM.
  std::optional<http::Server> metrics_server;
  unsigned short metrics_port = 0;
  if (plan.metrics) {
    metrics::Enable();
    metrics::OnScrape([&apps, &registry, &trigger_runner] { SampleProcess(apps, registry, *trigger_runner); });
    metrics_server.emplace(*plan.metrics, AnswerMetrics);
    metrics_port = metrics_server->Listen();
  }
  std::string public_url = flags.public_url;
  if (public_url.empty()) public_url = "http://" + options.host + ":" + std::to_string(port);
  while (!public_url.empty() && public_url.back() == '/') public_url.pop_back();
  std::string static_url = flags.static_url;
  while (!static_url.empty() && static_url.back() == '/') static_url.pop_back();
  apps.SetPublicUrl(public_url, static_url, flags.signin_url);
  log::Announce("listening", {{"address", options.host},
                          {"max_connections", options.max_connections},
                          {"max_open_apps", static_cast<std::int64_t>(plan.stores.max_open)},
                          {"open_files", static_cast<std::int64_t>(plan.open_files)},
                          {"port", port},
                          {"threads", options.threads},
                          {"write_threads", options.write_threads},
                          {"durability", flags.durability},
                          {"prefix", flags.prefix},
                          {"version", Version()}});
  if (metrics_server) log::Announce("metrics listening", {{"address", plan.metrics->host}, {"port", metrics_port}});
  g_listening = true;
  // Joined once the server stopped (the same SIGTERM stops both); should the server's Run() end
  // any other way, the metrics listener is told to stop.
  struct MetricsThread {
    std::thread thread;
    bool server_stopped = false;
    ~MetricsThread() {
      if (!thread.joinable()) return;
      if (!server_stopped) ::kill(::getpid(), SIGTERM);
      thread.join();
    }
  } metrics_thread;
  if (metrics_server) metrics_thread.thread = std::thread([&metrics_server] { metrics_server->Run(); });
  {
    // Before the server and the router go, however Run() ends: a queued write still running
    // uses the router and answers through the server's contexts.
    struct StopWritesFirst {
      app::FunctionPool& function_pool;
      triggers::Runner& trigger_runner;
      logs::RequestLog& request_log;
      app::Applications& apps;
      api::LiveHub& live_hub;
      ~StopWritesFirst() {
        try {
          apps.StopWatchingRecords();  // issue 36: no event is read from the stores past here
          live_hub.Stop();
          function_pool.Stop();  // a call still running finishes; the waiting ones are dropped
          trigger_runner.Stop();  // what it has not run stays in the outboxes, for the next start
          request_log.Stop();  // the rows of the last requests, into the queues while they run
          apps.StopForExit();  // every write durable; the stores are left to the exit (issue 33)
        } catch (const std::exception& e) {
          log::Error("stopping the write queues failed", {{"error", e.what()}});
        }
      }
    } stop_writes_first{function_pool, *trigger_runner, request_log, apps, live_hub};
    server.Run();
    metrics_thread.server_stopped = true;
  }
  registry.StopWatching();
  log::Announce("stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ids::Init();
  auto parsed = cli::ParseCommandLine(argc, argv);
  if (const int* exit_code = std::get_if<int>(&parsed)) return *exit_code;
  const cli::Command& command = std::get<cli::Command>(parsed);
  const cli::AdminArgs& a = command.admin;
  cli::SetStoreUrl(command.kind == cli::CommandKind::kServe ? command.serve.store : a.store);
  if (!cli::StoreUrl().empty() && !storage::IsPostgresUrl(cli::StoreUrl()))
    return cli::Fail("--store must be a postgresql:// URL (SQLite, the default, needs none)");
  try {
    switch (command.kind) {
      case cli::CommandKind::kServe: return Serve(command.serve);
      case cli::CommandKind::kAppCreate: return cli::CreateApp(a);
      case cli::CommandKind::kAppSet: return cli::SetGates(a);
      case cli::CommandKind::kAppExport: return cli::ExportApp(a);
      case cli::CommandKind::kAppImport: return cli::ImportApp(a);
      case cli::CommandKind::kAppRegion: return cli::SetRegion(a);
      case cli::CommandKind::kAppWebhookSecret: return cli::WebhookSecret(a);
      case cli::CommandKind::kAppOAuthRotate: return cli::OAuthRotate(a);
      case cli::CommandKind::kFilesGc: return cli::CollectFiles(a);
      case cli::CommandKind::kKeyCreate: return cli::CreateKey(a);
      case cli::CommandKind::kKeyRevoke: return cli::RevokeKey(a);
      case cli::CommandKind::kKeyList: return cli::ListKeys(a);
      case cli::CommandKind::kKeyRotateMaster: return cli::RotateMasterKey(a);
      case cli::CommandKind::kAppList: return cli::ListApps(a);
      case cli::CommandKind::kAppStats: return cli::AppStats(a);
      case cli::CommandKind::kAppRename: return cli::RenameApp(a);
      case cli::CommandKind::kAppDelete: return cli::DeleteApp(a);
      case cli::CommandKind::kBackup: return cli::Backup(a);
      case cli::CommandKind::kBackupVerify: return cli::VerifyBackup(a);
      case cli::CommandKind::kRestore: return cli::Restore(a);
      case cli::CommandKind::kFunctionDeploy: return cli::DeployFunction(a);
      case cli::CommandKind::kFunctionList: return cli::ListFunctions(a);
      case cli::CommandKind::kFunctionRemove: return cli::RemoveFunction(a);
    }
  } catch (const std::exception& e) {
    if (command.kind == cli::CommandKind::kServe && !g_listening) return cli::Fail(StartupFailure(e));
    log::Error("fatal", {{"error", e.what()}});
    return 1;
  }
  return 1;
}
