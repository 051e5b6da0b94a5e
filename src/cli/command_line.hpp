// crmd's command line (its grammar and outputs: the README, cli/commands.hpp), parsed here with
// CLI11: the one translation unit that compiles CLI11's headers, so that changing what a command
// does (cli/*_commands.cpp, main.cpp) does not compile them again.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>

namespace crmd::cli {

// `crmd serve`: the flags as given, with their defaults; Serve() checks their values.
struct ServeFlags {
  std::string data;
  std::string store;  // a PostgreSQL URL; empty: SQLite files under `data`
  std::string listen = "127.0.0.1:8080";
  std::string prefix = "core";
  std::string public_url;
  std::string static_url;
  std::string signin_url;
  int threads = 0;
  int write_threads = 0;
  std::string durability = "full";
  long session_ttl = 365L * 24 * 3600;
  long lockout_minutes = 30;
  std::string smtp_url;
  std::string mail_from = "no-reply@crmd.invalid";
  int request_log_days = 30;
  int request_timeout = 30;  // seconds a request has from its first byte to arrive whole
  int idle_timeout = 60;     // seconds a connection may wait for its next request
  int drain_timeout = 15;    // seconds in-flight requests get after SIGTERM
  int max_connections = 0;   // 0: from the open-file limit
  int reset_mails_per_hour = 3;
  int password_slots = 0;      // 0: one per core
  int password_rate = 300;     // password checks per address per minute, for callers without a key
  int max_open_apps = 0;       // 0: from the open-file limit
  int page_cache_mib = 256;    // SQLite page cache of all open stores together
  int read_timeout = 15;       // seconds a request's reads may run in all (400 124 beyond)
  int read_slice_ms = 20;      // milliseconds a read runs on a network thread before it moves off it
  int function_memory_mib = 64;                // an operator function's Lua heap per call
  std::int64_t function_instructions = 10'000'000;  // Lua instructions per call
  int function_timeout_ms = 1000;  // wall time per call of an operator's function (issue 31 #4)
  int function_threads = 0;        // threads running direct function calls; 0: two per core
  int function_threads_per_app = 2;  // one application's calls running at once, however they came
  int form_calls_per_minute = 60;  // calls under /functions/ per address a minute without a key; 0: off
  // Trigger actions (docs/TRIGGERS.md): webhooks may reach private addresses; retries of a failed
  // webhook or mail, and the wait before the first (doubling after).
  bool allow_private_webhooks = false;
  // Uploads larger than this many MiB are refused (413); 0: no cap (spec §8).
  std::int64_t max_file_size_mib = 0;
  // Issue 31 #10, #18: the pace and time an upload must keep (http::ServerOptions), and the
  // anonymous uploads an address may start a minute (api::RouterOptions); 0: no limit.
  std::int64_t upload_min_rate = 1024;
  int upload_timeout = 3600;
  int upload_rate = 30;
  int trigger_retries = 5;
  int trigger_retry_delay_ms = 2000;
  int trigger_lease = 60;
  int trigger_threads = 2;
  std::string console = "on";  // issue 34: the console at /console/, `on` or `off`
  int signin_rate = 30;  // sign-in gate posts per address per minute (api::kDefaultSignInPerMinute); 0: no limit
  std::string metrics_listen;   // HOST:PORT of the /metrics listener; empty: none
  std::string trusted_proxies;  // CIDR blocks of reverse proxies whose forwarding headers are believed
  std::string log_level = "info";  // debug|info|warn|error: lines below it are not written
  int slow_request_ms = 1000;      // a request this slow or slower gets a `slow request` warning; 0: none
};

// `crmd app create|region|webhook-secret`, `crmd key create|revoke|list` and `crmd function ...`.
struct AdminArgs {
  std::string data;
  std::string store;
  std::string app_id;
  std::string name;
  bool no_product_base = false;
  std::string region;  // empty: the default (app create), required (app region)
  std::string file;    // function deploy: the Lua source; app export: where to; app import: from where
  bool rotate = false;  // app webhook-secret: replace the secret before printing it
  bool yes = false;      // app delete: the operator confirmed
  bool replace = false;  // app import: an application of the export's id is replaced
  std::string older_than = "7d";  // files gc: the age an orphan must have, <n>d|h|m|s
  // app create, app set: `crmd` or `parse` (auth/gates.hpp), then each gate named (`captcha`,
  // `signup`, ...) to its value; empty: unchanged.
  std::string profile;
  std::map<std::string, std::string> gates;
};

enum class CommandKind {
  kServe, kAppCreate, kAppExport, kAppImport, kAppRegion, kAppWebhookSecret, kAppOAuthRotate, kAppSet,
  kAppList, kAppStats, kAppRename, kAppDelete, kBackup, kBackupVerify, kRestore,
  kKeyCreate, kKeyRevoke, kKeyList, kKeyRotateMaster, kFunctionDeploy, kFunctionList, kFunctionRemove, kFilesGc
};

struct Command {
  CommandKind kind = CommandKind::kServe;
  ServeFlags serve;
  AdminArgs admin;
};

// The command `argv` names, or the exit code when there is none to run: `--help` (0, help
// printed) or a usage error (printed to stderr).
std::variant<Command, int> ParseCommandLine(int argc, char** argv);

}  // namespace crmd::cli
