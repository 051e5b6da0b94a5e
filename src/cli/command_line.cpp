#include "cli/command_line.hpp"

#include <CLI/CLI.hpp>

#include <cctype>
#include <iostream>
#include <regex>
#include <sstream>

#include "util/version.hpp"

namespace crmd::cli {

namespace {

// `max-open-apps` -> `CRMD_MAX_OPEN_APPS`.
std::string EnvName(const std::string& long_name) {
  std::string out = "CRMD_";
  for (char c : long_name) out.push_back(c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  return out;
}

// Settings as `crmd serve --print-config` shows them: the password of a URL
// (`postgresql://crmd:PASSWORD@host/db`, `smtp://user:PASSWORD@host`) and a `password=` parameter
// are masked.
std::string MaskSecrets(std::string text) {
  static const std::regex url_password(R"((://[^:/@\s"]*:)[^@\s"]*@)");
  static const std::regex password_param(R"((password=)[^&\s"]*)", std::regex::icase);
  text = std::regex_replace(text, url_password, "$1****@");
  return std::regex_replace(text, password_param, "$1****");
}

// CLI11's TOML reader, with the file's top-level keys read as `serve`'s (`listen = ...` rather
// than a `[serve]` section: the config file is the server's), and a key whose CRMD_* variable is
// set left to the environment: CLI11 applies the file first and then the environment only to what
// is still unset, which would let the file win.
class ServeConfig : public CLI::ConfigTOML {
 public:
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override {
    std::vector<CLI::ConfigItem> items;
    for (auto& item : CLI::ConfigTOML::from_config(input)) {
      if (item.parents.empty() || item.parents.front() != "serve") item.parents.insert(item.parents.begin(), "serve");
      if (item.name != "++" && item.name != "--" && std::getenv(EnvName(item.name).c_str())) continue;
      items.push_back(std::move(item));
    }
    return items;
  }
};

constexpr const char* kStoreHelp =
    "PostgreSQL database of the applications' records and the registry, postgresql://... "
    "(default: SQLite files under --data, which always holds files and mail)";
}  // namespace

std::variant<Command, int> ParseCommandLine(int argc, char** argv) {
  Command command;
  CLI::App cli{"crmd: multi-tenant CRM records service"};
  cli.require_subcommand(1);
  cli.set_version_flag("--version", std::string("crmd ") + std::string(Version()), "Print crmd's release and commit, then exit");

  ServeFlags& serve = command.serve;
  auto* serve_cmd = cli.add_subcommand("serve", "Serve the HTTP API");
  serve_cmd->option_defaults()->always_capture_default();  // --print-config shows the defaults too
  // Required, but checked by Serve(): CLI11 checks a required option before it reads the config
  // file that may give it.
  serve_cmd->add_option("--data", serve.data, "Data directory (required)");
  serve_cmd->add_option("--store", serve.store, kStoreHelp);
  serve_cmd->add_option("--listen", serve.listen, "HOST:PORT (port 0 picks a free one)");
  serve_cmd->add_option("--prefix", serve.prefix, "Path and header prefix")
      ->check([](const std::string& p) {
        for (char c : p)
          if (!std::islower(static_cast<unsigned char>(c))) return std::string("lower-case letters only");
        return p.empty() ? std::string("must not be empty") : std::string();
      });
  serve_cmd->add_option("--public-url", serve.public_url, "Public base URL of this server");
  serve_cmd->add_option("--static-url", serve.static_url, "Public file host");
  serve_cmd->add_option("--signin-url", serve.signin_url,
                        "Sign-in page for file downloads (default: crmd's own, PUBLIC-URL/PREFIX/apps/APP/signin)");
  serve_cmd->add_option("--threads", serve.threads, "Network and read threads (default: 2 per core)");
  serve_cmd->add_option("--write-threads", serve.write_threads, "Write threads (default: 8 per core)");
  serve_cmd->add_option("--durability", serve.durability, "full: fsync every commit; normal: not")
      ->check(CLI::IsMember({"full", "normal"}));
  serve_cmd->add_option("--session-ttl", serve.session_ttl, "Session lifetime in seconds (default: a year)");
  serve_cmd->add_option("--lockout-minutes", serve.lockout_minutes,
                        "How long 8 failed logins lock an account (default: 30)");
  serve_cmd->add_option("--smtp-url", serve.smtp_url,
                        "SMTP server for mail, smtp://[user:pass@]host:port (default: DATA/apps/<id>/outbox)");
  serve_cmd->add_option("--mail-from", serve.mail_from, "Sender address of mail");
  serve_cmd->add_option("--request-log-days", serve.request_log_days,
                        "Days _RequestLog rows are kept (default: 30; 0 keeps them)");
  serve_cmd->add_option("--request-timeout", serve.request_timeout,
                        "Seconds a request has, from its first byte, to arrive whole (default: 30)");
  serve_cmd->add_option("--drain-timeout", serve.drain_timeout,
                        "Seconds requests in flight get to finish after SIGTERM; then reads still running end (default: 15)");
  serve_cmd->add_option("--idle-timeout", serve.idle_timeout,
                        "Seconds a keep-alive connection may wait for its next request (default: 60)");
  serve_cmd->add_option("--reset-mails-per-hour", serve.reset_mails_per_hour,
                        "Password reset mails one address gets per hour at most (default: 3)");
  serve_cmd->add_option("--password-slots", serve.password_slots,
                        "Password hashes running at once, 64 MiB each (default: one per core)");
  serve_cmd->add_option("--password-rate", serve.password_rate,
                        "Password checks and reset requests per address per minute without a key (default: 300)");
  serve_cmd->add_option("--max-open-apps", serve.max_open_apps,
                        "Application stores kept open, the least recently used closed beyond (default: from the open-file limit, at most 1,000)");
  serve_cmd->add_option("--page-cache-mib", serve.page_cache_mib,
                        "MiB of page cache all open stores share (default: 256)");
  serve_cmd->add_option("--function-memory-mib", serve.function_memory_mib,
                        "MiB of Lua heap one call of an operator's function may use (default: 64)");
  serve_cmd->add_option("--function-instructions", serve.function_instructions,
                        "Lua instructions one call of an operator's function may run (default: 10,000,000)");
  serve_cmd->add_option("--function-timeout-ms", serve.function_timeout_ms,
                        "Milliseconds one call of an operator's function may run, whatever it does (default: 1,000)");
  serve_cmd->add_option("--function-threads", serve.function_threads,
                        "Threads running direct calls of operator functions (default: 2 per core)");
  serve_cmd->add_option("--function-threads-per-app", serve.function_threads_per_app,
                        "Calls of one application's functions running at once: direct, trigger and MCP (default: 2)");
  serve_cmd->add_option("--form-calls-per-minute", serve.form_calls_per_minute,
                        "Calls under /functions/ one address may make a minute without a key; beyond, 429 (default: 60; 0: no limit)");
  serve_cmd->add_option("--max-file-size", serve.max_file_size_mib,
                        "MiB an uploaded file may have at most; beyond, 413 (default: 0, no cap)");
  serve_cmd->add_option("--upload-min-rate", serve.upload_min_rate,
                        "Bytes a second an upload must bring, over each --request-timeout; slower, 408 (default: 1024; 0: no minimum)");
  serve_cmd->add_option("--upload-timeout", serve.upload_timeout,
                        "Seconds an upload may take in all; longer, 408 (default: 3600)");
  serve_cmd->add_option("--upload-rate", serve.upload_rate,
                        "Uploads per address per minute for callers without a key or session; beyond, 429 (default: 30; 0: no limit)");
  serve_cmd->add_flag("--allow-private-webhooks", serve.allow_private_webhooks,
                      "Let trigger webhooks reach loopback and private addresses (default: public addresses only)");
  serve_cmd->add_option("--trigger-retries", serve.trigger_retries,
                        "Retries of a failed trigger webhook or mail before its failure is recorded (default: 5)");
  serve_cmd->add_option("--trigger-retry-delay", serve.trigger_retry_delay_ms,
                        "Milliseconds before the first retry of a trigger webhook or mail; doubles after (default: 2000)");
  serve_cmd->add_option("--trigger-threads", serve.trigger_threads,
                        "Threads running trigger actions, besides the one of the function queue (default: 2)");
  serve_cmd->add_option("--trigger-lease", serve.trigger_lease,
                        "Seconds after a server on the same database died or stopped before another runs its pending "
                        "trigger actions (default: 60)");
  serve_cmd->add_option("--read-timeout", serve.read_timeout,
                        "Seconds a request's reads may run in all; beyond, 400 code 124 (default: 15)");
  serve_cmd->add_option("--read-slice-ms", serve.read_slice_ms,
                        "Milliseconds a read runs on a network thread before it moves to a slow-read thread (default: 20)");
  serve_cmd->add_option("--console", serve.console, "The console at <public-url>/console/: on or off (default: on)")
      ->check(CLI::IsMember({"on", "off"}));
  serve_cmd->add_option("--signin-rate", serve.signin_rate,
                        "Sign-in gate posts per address per minute; beyond, 429 (default: 30; 0: no limit)");
  serve_cmd->add_option("--metrics-listen", serve.metrics_listen,
                        "HOST:PORT of a listener of its own answering GET /metrics in the Prometheus text format (default: none)");
  serve_cmd->add_option("--trusted-proxies", serve.trusted_proxies,
                        "Reverse proxies (CIDR,...) whose Forwarded/X-Forwarded-For name the client and X-Forwarded-Proto its scheme "
                        "(default: none; the peer is the client)");
  serve_cmd->add_option("--log-level", serve.log_level, "debug, info, warn or error: lines below it are not written (default: info)")
      ->check(CLI::IsMember({"debug", "info", "warn", "error"}));
  serve_cmd->add_option("--slow-request-ms", serve.slow_request_ms,
                        "A request this slow or slower gets a `slow request` warning line; 0: none (default: 1000)");
  serve_cmd->add_option("--max-connections", serve.max_connections,
                        "Open connections at most (default: a quarter of the open-file limit, at most 10,000)");

  // Issue 35: every serve flag also from a TOML file (CLI11's own reader, ServeConfig; keys named
  // as the flags, at the top level: `listen = "127.0.0.1:8080"`) and from the environment
  // (CRMD_LISTEN for --listen, ...). A flag on the command line wins over the environment, which
  // wins over the file; the defaults come last.
  cli.set_config("--config", "", "TOML file of `crmd serve`'s settings, keys named as the flags (listen = \"127.0.0.1:8080\")");
  cli.config_formatter(std::make_shared<ServeConfig>());
  cli.allow_config_extras(CLI::config_extras_mode::error);  // a misspelt key is refused, not ignored
  serve_cmd->fallthrough();  // `crmd serve --config FILE`: the option is the top command's, given after `serve`
  bool print_config = false;
  serve_cmd->add_flag("--print-config", print_config, "Print the settings in effect (secrets masked) as a config file, then exit");
  for (CLI::Option* option : serve_cmd->get_options())
    if (!option->get_lnames().empty() && option->get_lnames().front() != "help" && option->get_lnames().front() != "print-config")
      option->envname(EnvName(option->get_lnames().front()));

  std::string& data = command.admin.data;
  std::string& app_id = command.admin.app_id;
  std::string& name = command.admin.name;
  auto* app_cmd = cli.add_subcommand("app", "Manage applications");
  app_cmd->require_subcommand(1);
  auto* app_create = app_cmd->add_subcommand("create", "Create an application");
  app_create->add_option("--data", data, "Data directory")->required();
  app_create->add_option("--store", command.admin.store, kStoreHelp);
  app_create->add_option("--id", app_id, "Application id (default: random)");
  app_create->add_option("--name", name, "Display name");
  bool& no_product_base = command.admin.no_product_base;
  app_create->add_flag("--no-product-base", no_product_base,
                       "Start empty (system classes only) instead of from the CRM product base");
  std::string& region = command.admin.region;
  app_create->add_option("--region", region,
                         "Region of phone numbers without a country code, ISO 3166 (default: IL)");
  auto* app_set = app_cmd->add_subcommand(
      "set", "Change an application's gates (docs/PROFILES.md); prints them all; a running server follows within a second");
  app_set->add_option("--data", data, "Data directory")->required();
  app_set->add_option("--store", command.admin.store, kStoreHelp);
  app_set->add_option("--app", app_id, "Application id")->required();
  for (auto* sub : {app_create, app_set}) {
    sub->add_option("--profile", command.admin.profile,
                    "crmd (the spec's gates, the default) or parse (Parse Server's defaults); the options below then change single gates");
    sub->add_option("--captcha", command.admin.gates["captcha"], "on: anonymous record writes answer 119 (spec 4.1); off: permissions decide");
    sub->add_option("--signup", command.admin.gates["signup"], "key: sign-up needs the master or an API key (spec 4.7); open: anyone");
    sub->add_option("--password-policy", command.admin.gates["password-policy"], "on: the spec's password rule (4.7); off: any non-empty password");
    sub->add_option("--new-classes", command.admin.gates["new-classes"],
                    "closed: only keys make classes, closed until opened; open: a client's first write makes one, open to all");
    sub->add_option("--dotted-keys", command.admin.gates["dotted-keys"], "on: {\"object.key\": v} in an update reaches inside an Object field");
    sub->add_option("--anonymous-users", command.admin.gates["anonymous-users"],
                    "on: Parse's anonymous users (authData.anonymous sign-up, login, link); other providers answer 252");
    sub->add_option("--user-fields", command.admin.gates["user-fields"], "open: an open sign-up or an own update may add fields to _User");
    sub->add_option("--self-update", command.admin.gates["self-update"], "on: a user may update their own _User record (spec 4.7 forbids it)");
    sub->add_option("--drop-system-classes", command.admin.gates["drop-system-classes"], "on: the master key may drop an empty system class");
    sub->add_option("--installations", command.admin.gates["installations"],
                    "on: an installation (installation-id header) creates, reads and updates its own _Installation row");
    sub->add_option("--parse-names", command.admin.gates["parse-names"],
                    "on: Parse's other names for crmd's routes and values (POST /config, verifyPassword, loginAs, Bytes, ...)");
    sub->add_option("--web2table-classes", command.admin.gates["web2table-classes"],
                    "Classes web2table may write, comma-separated (never Config, system or log classes); * for all (default)");
    sub->add_option("--file-quota-mib", command.admin.gates["file-quota-mib"],
                    "MiB the application's uploaded files may take at most; beyond, an upload answers 413 (0: no quota, the default)");
    sub->add_option("--mail-from-name", command.admin.gates["mail-from-name"],
                    "The display name the application's mail (reset links) comes from, such as its name (- clears it)");
    sub->add_option("--mail-from", command.admin.gates["mail-from"],
                    "The address the application's mail comes from (default: the server's --mail-from; - clears it)");
    sub->add_option("--live-classes", command.admin.gates["live-classes"],
                    "Classes LiveQuery subscribers may watch (docs/LIVEQUERY.md), comma-separated; * for all; - for none (the default)");
  }
  auto* app_region = app_cmd->add_subcommand("region", "Change the region of an application's phone numbers");
  app_region->add_option("--data", data, "Data directory")->required();
  app_region->add_option("--store", command.admin.store, kStoreHelp);
  app_region->add_option("--app", app_id, "Application id")->required();
  app_region->add_option("--region", region, "ISO 3166 region, such as IL or US")->required();
  auto* app_webhook_secret =
      app_cmd->add_subcommand("webhook-secret", "Print the secret that signs an application's webhooks");
  app_webhook_secret->add_option("--data", data, "Data directory")->required();
  app_webhook_secret->add_option("--store", command.admin.store, kStoreHelp);
  app_webhook_secret->add_option("--app", app_id, "Application id")->required();
  app_webhook_secret->add_flag("--rotate", command.admin.rotate,
                               "Replace it with a new random one first (a running server signs with it within a second)");
  auto* app_export = app_cmd->add_subcommand(
      "export", "Write an application's store (classes, records, relations, pending triggers) and registry entry to a file");
  app_export->add_option("--data", data, "Data directory")->required();
  app_export->add_option("--store", command.admin.store, kStoreHelp);
  app_export->add_option("--app", app_id, "Application id")->required();
  app_export->add_option("--out", command.admin.file, "File to write (JSON lines)")->required();
  auto* app_import = app_cmd->add_subcommand(
      "import", "Create an application from a file `app export` wrote, into this --data and --store; checks the counts");
  app_import->add_option("--data", data, "Data directory")->required();
  app_import->add_option("--store", command.admin.store, kStoreHelp);
  app_import->add_option("--in", command.admin.file, "File `app export` wrote")->required();
  app_import->add_flag("--replace", command.admin.replace,
                       "Replace the application of the export's id if there is one (its records and files go; a running server serves the import within a second)");
  auto* app_list = app_cmd->add_subcommand("list", "List the applications: id, name, store and files sizes, last request");
  app_list->add_option("--data", data, "Data directory")->required();
  app_list->add_option("--store", command.admin.store, kStoreHelp);
  auto* app_stats = app_cmd->add_subcommand("stats", "One application's classes and rows, sizes and logged requests");
  app_stats->add_option("--data", data, "Data directory")->required();
  app_stats->add_option("--store", command.admin.store, kStoreHelp);
  app_stats->add_option("--app", app_id, "Application id")->required();
  auto* app_rename = app_cmd->add_subcommand("rename", "Change an application's display name (its id stays)");
  app_rename->add_option("--data", data, "Data directory")->required();
  app_rename->add_option("--store", command.admin.store, kStoreHelp);
  app_rename->add_option("--app", app_id, "Application id")->required();
  app_rename->add_option("--name", name, "New display name")->required();
  auto* app_delete = app_cmd->add_subcommand(
      "delete", "Delete an application for good: its store, files and registry entry (a running server stops serving it within a second)");
  app_delete->add_option("--data", data, "Data directory")->required();
  app_delete->add_option("--store", command.admin.store, kStoreHelp);
  app_delete->add_option("--app", app_id, "Application id")->required();
  app_delete->add_flag("--yes", command.admin.yes, "Confirm: the application cannot be brought back but from an export or a backup");
  auto* app_oauth_rotate = app_cmd->add_subcommand(
      "oauth-rotate", "End every MCP sign-in of an application: its OAuth clients and tokens (docs/MCP.md)");
  app_oauth_rotate->add_option("--data", data, "Data directory")->required();
  app_oauth_rotate->add_option("--store", command.admin.store, kStoreHelp);
  app_oauth_rotate->add_option("--app", app_id, "Application id")->required();

  auto* backup_cmd = cli.add_subcommand("backup", "Copy a SQLite data directory while its server serves (docs/OPERATIONS.md)");
  backup_cmd->add_option("--data", data, "Data directory (required)");  // not for `backup verify`
  backup_cmd->add_option("--store", command.admin.store, kStoreHelp);
  backup_cmd->add_option("--out", command.admin.file, "Folder to write the backup into (new or empty)");
  auto* backup_verify = backup_cmd->add_subcommand("verify", "Check a backup: its manifest, registry, stores' integrity and files");
  backup_verify->add_option("--in", command.admin.file, "Backup folder")->required();
  auto* restore_cmd = cli.add_subcommand("restore", "Put a backup into an empty data directory (no server may run on it)");
  restore_cmd->add_option("--in", command.admin.file, "Backup folder")->required();
  restore_cmd->add_option("--data", data, "Data directory")->required();
  restore_cmd->add_option("--store", command.admin.store, kStoreHelp);

  auto* key_cmd = cli.add_subcommand("key", "Manage API keys");
  key_cmd->require_subcommand(1);
  auto* key_create = key_cmd->add_subcommand("create", "Issue a named API key");
  auto* key_revoke = key_cmd->add_subcommand("revoke", "Revoke a named API key");
  auto* key_list = key_cmd->add_subcommand("list", "List API keys (names only)");
  auto* key_rotate_master = key_cmd->add_subcommand(
      "rotate-master", "Replace the application's master key: the new one is printed once; a running server refuses the old within a second");
  for (auto* sub : {key_create, key_revoke, key_list, key_rotate_master}) {
    sub->add_option("--data", data, "Data directory")->required();
    sub->add_option("--store", command.admin.store, kStoreHelp);
    sub->add_option("--app", app_id, "Application id")->required();
  }
  key_create->add_option("--name", name, "Key name")->required();
  key_revoke->add_option("--name", name, "Key name")->required();

  auto* fn_cmd = cli.add_subcommand("function", "Deploy the operator's Lua functions (POST /functions/{appId}/{name})");
  fn_cmd->require_subcommand(1);
  auto* fn_deploy = fn_cmd->add_subcommand("deploy", "Deploy (or replace) a function");
  auto* fn_list = fn_cmd->add_subcommand("list", "List an application's functions");
  auto* fn_remove = fn_cmd->add_subcommand("remove", "Remove a function");
  for (auto* sub : {fn_deploy, fn_list, fn_remove}) {
    sub->add_option("--data", data, "Data directory")->required();
    sub->add_option("--store", command.admin.store, kStoreHelp);
    sub->add_option("--app", app_id, "Application id")->required();
  }
  fn_deploy->add_option("--name", name, "Function name")->required();
  fn_deploy->add_option("--file", command.admin.file, "Lua source file")->required();
  fn_remove->add_option("--name", name, "Function name")->required();

  auto* files_cmd = cli.add_subcommand("files", "Manage an application's uploaded files");
  files_cmd->require_subcommand(1);
  auto* files_gc = files_cmd->add_subcommand("gc", "Remove the files no record references (spec §3.3 orphans)");
  files_gc->add_option("--data", data, "Data directory")->required();
  files_gc->add_option("--store", command.admin.store, kStoreHelp);
  files_gc->add_option("--app", app_id, "Application id")->required();
  files_gc->add_option("--older-than", command.admin.older_than,
                       "Only files last written longer ago than this: <n>d, <n>h, <n>m or <n>s (default: 7d)");

  // The admin commands take --data and --store from CRMD_DATA and CRMD_STORE too.
  for (CLI::App* group : cli.get_subcommands({}))
    for (CLI::App* sub : group->get_subcommands({}))
      for (const char* name : {"data", "store"})
        if (CLI::Option* option = sub->get_option_no_throw(std::string("--") + name)) option->envname(EnvName(name));
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli.exit(e);  // prints help or the usage error
  }
  if (serve_cmd->parsed() && print_config) {
    std::istringstream settings(MaskSecrets(serve_cmd->config_to_str(/*default_also=*/true, /*write_description=*/false)));
    for (std::string line; std::getline(settings, line);)
      if (!line.starts_with("print-config=")) std::cout << line << '\n';
    return 0;
  }
  if (serve_cmd->parsed()) command.kind = CommandKind::kServe;
  else if (app_create->parsed()) command.kind = CommandKind::kAppCreate;
  else if (app_region->parsed()) command.kind = CommandKind::kAppRegion;
  else if (app_set->parsed()) command.kind = CommandKind::kAppSet;
  else if (app_webhook_secret->parsed()) command.kind = CommandKind::kAppWebhookSecret;
  else if (app_oauth_rotate->parsed()) command.kind = CommandKind::kAppOAuthRotate;
  else if (app_export->parsed()) command.kind = CommandKind::kAppExport;
  else if (app_import->parsed()) command.kind = CommandKind::kAppImport;
  else if (key_create->parsed()) command.kind = CommandKind::kKeyCreate;
  else if (key_revoke->parsed()) command.kind = CommandKind::kKeyRevoke;
  else if (key_list->parsed()) command.kind = CommandKind::kKeyList;
  else if (key_rotate_master->parsed()) command.kind = CommandKind::kKeyRotateMaster;
  else if (app_list->parsed()) command.kind = CommandKind::kAppList;
  else if (app_stats->parsed()) command.kind = CommandKind::kAppStats;
  else if (app_rename->parsed()) command.kind = CommandKind::kAppRename;
  else if (app_delete->parsed()) command.kind = CommandKind::kAppDelete;
  else if (backup_verify->parsed()) command.kind = CommandKind::kBackupVerify;
  else if (backup_cmd->parsed()) {
    if (command.admin.file.empty() || data.empty()) {
      std::cerr << "crmd backup: --data and --out are required" << std::endl;
      return 1;
    }
    command.kind = CommandKind::kBackup;
  } else if (restore_cmd->parsed()) command.kind = CommandKind::kRestore;
  else if (fn_deploy->parsed()) command.kind = CommandKind::kFunctionDeploy;
  else if (fn_list->parsed()) command.kind = CommandKind::kFunctionList;
  else if (fn_remove->parsed()) command.kind = CommandKind::kFunctionRemove;
  else if (files_gc->parsed()) command.kind = CommandKind::kFilesGc;
  else return 1;
  return command;
}

}  // namespace crmd::cli
