// `crmd app create|set|region|webhook-secret|oauth-rotate|export|import`: an application's registry
// entry and store.
#include "cli/commands.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "app/application.hpp"
#include "auth/gates.hpp"
#include "storage/database.hpp"
#include "storage/registry_store.hpp"
#include "storage/stores.hpp"
#include "storage/transfer.hpp"
#include "util/ids.hpp"
#include "util/phone.hpp"
#include "util/time.hpp"
#include "write/prepare_application.hpp"
#include "write/product_base.hpp"
#include "cli/admin.hpp"
#include "cli/app_files.hpp"
#include "cli/app_removal.hpp"
#include "util/json.hpp"

namespace crmd::cli {

namespace json = boost::json;

namespace {

constexpr const char* kDefaultKeyName = "default";

// The gates a profile and the single gates named after it give, starting from `gates`; the
// error a person reads when a name or value is unknown.
std::optional<std::string> ApplyGates(auth::Gates& gates, const AdminArgs& args) {
  auto classes = gates.web2table_classes;  // an operator's choice, not a profile's
  const std::int64_t file_quota_mib = gates.file_quota_mib;  // a limit, not a gate: a profile keeps it
  auto mail_from_name = gates.mail_from_name, mail_from = gates.mail_from;  // settings, kept too
  const bool live_all = gates.live_all_classes;  // an operator's choice, kept too
  auto live_classes = gates.live_classes;
  if (args.profile == "parse") gates = auth::Gates::Parse();
  else if (args.profile == "crmd") gates = auth::Gates{};
  else if (!args.profile.empty()) return "--profile takes crmd or parse";
  gates.web2table_classes = std::move(classes);
  gates.file_quota_mib = file_quota_mib;
  gates.mail_from_name = std::move(mail_from_name);
  gates.mail_from = std::move(mail_from);
  gates.live_all_classes = live_all;
  gates.live_classes = std::move(live_classes);
  for (const auto& [name, value] : args.gates)
    if (!value.empty())
      if (auto error = auth::SetGate(gates, name, value)) return error;
  return std::nullopt;
}

}  // namespace

int CreateApp(const AdminArgs& args) {
  const std::string& data = args.data;
  const std::string& name = args.name;
  const bool product_base = !args.no_product_base;
  std::string app_id = args.app_id;
  std::string region = args.region;
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

int SetRegion(const AdminArgs& args) {
  const std::string &data = args.data, &app_id = args.app_id, &region = args.region;
  if (!phone::IsKnownRegion(region)) return Fail("--region must be an ISO 3166 region with phone numbers, such as IL or US");
  auto registry_store = OpenRegistryOf(data);
  auto& store = *registry_store;
  // A running server sees it within a second and computes the application's phone keys again.
  if (store.SetRegion(app_id, region) != storage::RegistryChange::kDone) return Fail("no application " + app_id);
  Print(json::object{{"appId", app_id}, {"region", region}});
  return 0;
}

int SetGates(const AdminArgs& args) {
  const std::string &data = args.data, &app_id = args.app_id;
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

int WebhookSecret(const AdminArgs& args) {
  const std::string &data = args.data, &app_id = args.app_id;
  const bool rotate = args.rotate;
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

namespace {

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

}  // namespace

int ExportApp(const AdminArgs& args) {
  const std::string &data = args.data, &app_id = args.app_id, &file = args.file;
  auto registry_store = OpenRegistryOf(data);
  const auto app = registry_store->Load(app_id);
  if (!app) return Fail("no application " + app_id);
  auto db = AdminStoresRaw(data)->Open(app_id);
  // Issue 35: the export holds the webhook and OAuth secrets and the key hashes: its owner's
  // alone, whatever the umask (and a file it replaces loses its old mode).
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || ::fchmod(fd, 0600) != 0) {
    if (fd >= 0) ::close(fd);
    return Fail("cannot write " + file + ": " + std::strerror(errno));
  }
  ::close(fd);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) return Fail("cannot write " + file);
  try {
    const auto counts = storage::ExportStore(*db, json::object{{"appId", app_id}, {"registry", RegistryJson(*app)}, {"files", true}}, out);
    const auto files = ExportAppFiles((std::filesystem::path(data) / "apps" / app_id).string(), out);
    out.close();
    if (!out) throw std::runtime_error("cannot write " + file);
    json::object answer = CountsJson(app_id, counts);
    answer["files"] = files.count;
    answer["filesBytes"] = files.bytes;
    Print(answer);
  } catch (...) {
    std::filesystem::remove(file);
    throw;
  }
  return 0;
}

int ImportApp(const AdminArgs& args) {
  const std::string &data = args.data, &file = args.file;
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
  if (registry_store->Load(app_id)) {
    if (!args.replace) return Fail("application " + app_id + " already exists (--replace replaces it)");
    // Its records and files go first; a server then sees it gone before it comes back.
    RemoveApplication(data, app_id);
  }
  in.seekg(0);
  // As `app create`: the store is complete before the registry names the application; a store
  // left by an interrupted import is not an application, and is replaced.
  auto stores = AdminStoresRaw(data);
  stores->Remove(app_id);
  json::object read_header;
  storage::TransferCounts counts;
  FilesCount files;
  const std::string app_dir = (std::filesystem::path(data) / "apps" / app_id).string();
  try {
    auto db = stores->Open(app_id);
    counts = storage::ImportStore(*db, in, read_header);
    // An export of an earlier release ends with its store; one that says files follow and has
    // none was cut short.
    if (const auto* has_files = read_header.if_contains("files"); has_files && has_files->is_bool() && has_files->get_bool())
      files = ImportAppFiles(in, app_dir);
  } catch (...) {
    stores->Remove(app_id);
    std::error_code ignored;
    std::filesystem::remove_all(app_dir, ignored);
    throw;
  }
  if (registry_store->CreateApp(RegistryRecord(app_id, read_header.at("registry").as_object())) !=
      storage::RegistryChange::kDone)
    return Fail("application " + app_id + " already exists");
  json::object answer = CountsJson(app_id, counts);
  answer["files"] = files.count;
  answer["filesBytes"] = files.bytes;
  Print(answer);
  return 0;
}

// A new OAuth secret: every client registration and token of the application's MCP sign-in ends
// (a running server sees it within a second).
int OAuthRotate(const AdminArgs& args) {
  const std::string &data = args.data, &app_id = args.app_id;
  auto registry_store = OpenRegistryOf(data);
  auto& store = *registry_store;
  if (store.SetOAuthSecret(app_id, storage::NewWebhookSecret()) != storage::RegistryChange::kDone)
    return Fail("no application " + app_id);
  Print(json::object{{"appId", app_id}, {"rotated", true}});
  return 0;
}

}  // namespace crmd::cli
