// `crmd app list|stats|rename|delete`: what an operator hosting many applications needs to find
// one again, see what it holds, and take it away (issue 35).
#include <algorithm>
#include <filesystem>
#include <set>

#include "cli/admin.hpp"
#include "cli/app_files.hpp"
#include "cli/app_removal.hpp"
#include "cli/commands.hpp"
#include "schema/log_classes.hpp"
#include "storage/database.hpp"
#include "storage/registry_store.hpp"
#include "storage/stores.hpp"

namespace crmd::cli {

namespace json = boost::json;

namespace {

std::string AppDir(const std::string& data_dir, const std::string& app_id) {
  return (std::filesystem::path(data_dir) / "apps" / app_id).string();
}

// The time of the application's last logged request (spec §2.6 `_RequestLog`), null when none is
// logged (or kept: --request-log-days).
json::value LastRequest(storage::Database& db, const std::vector<storage::ClassDefinition>& classes) {
  for (const auto& definition : classes) {
    const schema::ClassSchema& cls = *definition;
    if (cls.name != schema::kRequestLogClass) continue;
    schema::Query q;
    q.order = {{"createdAt", true}};
    q.limit = 1;
    json::value last = nullptr;
    db.Find(cls, q, [&](const storage::Row& row) {
      last = json::string(row.created_at);
      return false;
    });
    return last;
  }
  return nullptr;
}

// What `app list` says of one application.
json::object Summary(const storage::AppRecord& app, storage::Stores& stores, bool stored, const std::string& data_dir) {
  json::value last = nullptr;
  if (stored) {
    auto db = stores.Open(app.app_id);
    last = LastRequest(*db, db->LoadSchema());
  }
  const FilesCount files = UploadedFiles(AppDir(data_dir, app.app_id));
  return json::object{{"appId", app.app_id},
                      {"name", app.name},
                      {"createdAt", app.created_at},
                      {"storeBytes", stored ? stores.StoreBytes(app.app_id) : 0},
                      {"files", files.count},
                      {"filesBytes", files.bytes},
                      {"lastRequest", std::move(last)}};
}

}  // namespace

int ListApps(const AdminArgs& args) {
  auto registry = OpenRegistryOf(args.data);
  auto stores = AdminStoresRaw(args.data);
  const auto listed = stores->List();
  const std::set<std::string> stored(listed.begin(), listed.end());
  json::array apps;
  for (const auto& app : registry->LoadAll()) apps.push_back(Summary(app, *stores, stored.contains(app.app_id), args.data));
  Print(json::object{{"apps", std::move(apps)}});
  return 0;
}

int AppStats(const AdminArgs& args) {
  auto registry = OpenRegistryOf(args.data);
  const auto app = registry->Load(args.app_id);
  if (!app) return Fail("no application " + args.app_id);
  auto stores = AdminStoresRaw(args.data);
  const auto listed = stores->List();
  json::object out = Summary(*app, *stores, std::find(listed.begin(), listed.end(), args.app_id) != listed.end(), args.data);
  auto db = stores->Open(args.app_id);
  json::object classes;
  std::int64_t requests = 0;
  for (const auto& definition : db->LoadSchema()) {
    const schema::ClassSchema& cls = *definition;
    const std::int64_t rows = db->Count(cls, schema::Query{});
    classes[cls.name] = rows;
    if (cls.name == schema::kRequestLogClass) requests = rows;
  }
  out["classes"] = std::move(classes);
  out["requests"] = requests;  // the write requests logged and kept (--request-log-days)
  out["apiKeys"] = static_cast<std::int64_t>(std::count_if(app->api_keys.begin(), app->api_keys.end(),
                                                            [](const auto& k) { return !k.revoked_at; }));
  out["functions"] = static_cast<std::int64_t>(app->functions.size());
  Print(out);
  return 0;
}

int RenameApp(const AdminArgs& args) {
  if (args.name.empty()) return Fail("--name must not be empty");
  // A running server shows it within a second (the registry's poll).
  if (OpenRegistryOf(args.data)->SetName(args.app_id, args.name) != storage::RegistryChange::kDone)
    return Fail("no application " + args.app_id);
  Print(json::object{{"appId", args.app_id}, {"name", args.name}});
  return 0;
}

int DeleteApp(const AdminArgs& args) {
  if (!args.yes)
    return Fail("app delete removes the application's records, users, keys and files for good: add --yes to confirm");
  if (!RemoveApplication(args.data, args.app_id)) return Fail("no application " + args.app_id);
  Print(json::object{{"appId", args.app_id}, {"deleted", true}});
  return 0;
}

}  // namespace crmd::cli
