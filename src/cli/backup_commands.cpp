// `crmd backup|restore`, `crmd backup verify` (issue 35): a copy of a SQLite data directory taken
// while its server keeps serving, and put back into an empty one. A backup folder holds:
//   registry.db            the registry (VACUUM INTO: one read transaction)
//   apps/<id>/data.db      each application's store, the same way: consistent in itself
//   apps/<id>/...          its files, public copies (as hard links), private marks, mail outbox
//   backup.json            written last: {"format":"crmd-backup","version":1,"crmd","createdAt",
//                          "apps":[{"appId","files","filesBytes"}]}; a folder without it is not
//                          a backup
// Each store is copied after the registry and before its files: a write acknowledged before the
// backup began is in it; a file deleted between the store's copy and its folder's is missing from
// the copy (a download of it answers 404). On PostgreSQL, pg_dump (docs/OPERATIONS.md).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <sys/stat.h>

#include "cli/admin.hpp"
#include "cli/app_files.hpp"
#include "cli/commands.hpp"
#include "cli/data_dir_lock.hpp"
#include "storage/database.hpp"
#include "storage/registry_store.hpp"
#include "storage/stores.hpp"
#include "util/json.hpp"
#include "util/time.hpp"
#include "util/version.hpp"

namespace crmd::cli {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

constexpr const char* kManifest = "backup.json";
constexpr const char* kFormat = "crmd-backup";
constexpr std::int64_t kFormatVersion = 1;

bool IsStoreFile(const fs::path& name) {
  const std::string n = name.filename().string();
  return n == "data.db" || n == "data.db-wal" || n == "data.db-shm";
}

// Copies the application folder `from` to `to`, but the store's files; a second name of a file
// (public/ links to files/) stays a second name. Returns the files and bytes copied.
FilesCount CopyAppFolder(const fs::path& from, const fs::path& to) {
  FilesCount count;
  std::map<std::pair<dev_t, ino_t>, fs::path> copied;
  std::vector<fs::path> paths;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(from, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file() && !(it->path().parent_path() == from && IsStoreFile(it->path()))) paths.push_back(it->path());
  std::sort(paths.begin(), paths.end());
  for (const auto& path : paths) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) continue;  // removed meanwhile
    const fs::path target = to / fs::relative(path, from);
    fs::create_directories(target.parent_path());
    const auto [at, first] = copied.try_emplace({st.st_dev, st.st_ino}, target);
    if (!first) {
      fs::create_hard_link(at->second, target);
      continue;
    }
    std::error_code copy_ec;
    fs::copy_file(path, target, fs::copy_options::overwrite_existing, copy_ec);
    if (copy_ec) continue;  // removed between the listing and the copy
    if (path.parent_path().filename() == "files") {
      ++count.count;
      count.bytes += static_cast<std::int64_t>(st.st_size);
    }
  }
  return count;
}

// What is wrong with the backup at `in`, or nothing; `manifest` receives its backup.json.
std::optional<std::string> Check(const fs::path& in, json::object& manifest) {
  std::ifstream file(in / kManifest);
  if (!file) return in.string() + " is no backup of crmd (no " + kManifest + "): it may be cut short";
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  auto parsed = ParseJson(text);
  if (!parsed.ok() || !parsed.value().is_object() || parsed.value().as_object().if_contains("format") == nullptr ||
      parsed.value().as_object().at("format") != kFormat)
    return (in / kManifest).string() + " is not a backup manifest";
  manifest = parsed.value().as_object();
  if (manifest.at("version").to_number<std::int64_t>() > kFormatVersion)
    return "the backup was written by a newer crmd (" + std::string(manifest.at("crmd").as_string()) + ")";
  std::set<std::string> in_registry;
  for (const auto& app : storage::OpenSqliteRegistry((in / "registry.db").string())->LoadAll()) in_registry.insert(app.app_id);
  auto stores = storage::SqliteStores(in.string(), storage::Durability::kFull, 1);
  for (const auto& entry : manifest.at("apps").as_array()) {
    const auto& app = entry.as_object();
    const std::string id(app.at("appId").as_string());
    if (!in_registry.contains(id)) return "application " + id + " is missing from the backup's registry";
    if (!fs::exists(in / "apps" / id / "data.db")) return "the store of " + id + " is missing";
    if (!stores->Open(id)->CheckIntegrity()) return "the store of " + id + " fails its integrity check";
    const FilesCount files = UploadedFiles((in / "apps" / id).string());
    if (files.count != app.at("files").to_number<std::int64_t>() || files.bytes != app.at("filesBytes").to_number<std::int64_t>())
      return "the files of " + id + " do not match the manifest";
  }
  return std::nullopt;
}

}  // namespace

int Backup(const AdminArgs& args) {
  if (!StoreUrl().empty())
    return Fail("crmd backup copies SQLite data directories; on PostgreSQL use pg_dump --schema=crmd --schema='app_*' and copy --data (docs/OPERATIONS.md)");
  const fs::path out(args.file), data(args.data);
  if (!fs::exists(data / "registry.db")) return Fail(args.data + " holds no registry: not a crmd data directory");
  std::error_code ec;
  if (fs::exists(out) && !fs::is_empty(out, ec)) return Fail("--out " + args.file + " is not empty");
  fs::create_directories(out / "apps");
  fs::permissions(out, fs::perms::owner_all, ec);  // keys' hashes and webhook secrets: the owner's alone
  const auto started = std::chrono::steady_clock::now();
  OpenRegistryOf(args.data)->BackupTo((out / "registry.db").string());
  auto stores = AdminStoresRaw(args.data);
  json::array apps;
  FilesCount total;
  for (const auto& app : storage::OpenSqliteRegistry((out / "registry.db").string())->LoadAll()) {
    fs::create_directories(out / "apps" / app.app_id);
    if (fs::exists(data / "apps" / app.app_id / "data.db"))
      stores->BackupTo(app.app_id, (out / "apps" / app.app_id / "data.db").string());
    const FilesCount files = CopyAppFolder(data / "apps" / app.app_id, out / "apps" / app.app_id);
    total.count += files.count;
    total.bytes += files.bytes;
    apps.push_back(json::object{{"appId", app.app_id}, {"files", files.count}, {"filesBytes", files.bytes}});
  }
  const std::size_t app_count = apps.size();
  json::object manifest{{"format", kFormat}, {"version", kFormatVersion}, {"crmd", Version()},
                        {"createdAt", timeutil::NowIso()}, {"apps", std::move(apps)}};
  {
    std::ofstream file(out / (std::string(kManifest) + ".tmp"));
    file << ToJson(manifest) << '\n';
    file.close();
    if (!file) return Fail("cannot write " + (out / kManifest).string());
  }
  fs::rename(out / (std::string(kManifest) + ".tmp"), out / kManifest);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  Print(json::object{{"out", args.file}, {"apps", app_count}, {"files", total.count}, {"filesBytes", total.bytes}, {"seconds", seconds}});
  return 0;
}

int VerifyBackup(const AdminArgs& args) {
  json::object manifest;
  if (auto wrong = Check(args.file, manifest)) return Fail(*wrong);
  Print(json::object{{"in", args.file}, {"ok", true}, {"apps", manifest.at("apps").as_array().size()},
                     {"createdAt", manifest.at("createdAt")}, {"crmd", manifest.at("crmd")}});
  return 0;
}

int Restore(const AdminArgs& args) {
  if (!StoreUrl().empty()) return Fail("crmd restore puts back SQLite data directories; on PostgreSQL use pg_restore");
  const fs::path in(args.file), data(args.data);
  json::object manifest;
  if (auto wrong = Check(in, manifest)) return Fail(*wrong);
  // No server may run on it meanwhile; the lock is this process's until it exits.
  if (auto wrong = LockDataDir(args.data)) return Fail(*wrong);
  std::error_code ec;
  if (fs::exists(data / "registry.db") || (fs::exists(data / "apps") && !fs::is_empty(data / "apps", ec)))
    return Fail("--data " + args.data + " already holds applications: restore into an empty data directory");
  fs::copy_file(in / "registry.db", data / "registry.db");
  for (const auto& entry : manifest.at("apps").as_array()) {
    const std::string id(entry.as_object().at("appId").as_string());
    fs::create_directories(data / "apps" / id);
    fs::copy_file(in / "apps" / id / "data.db", data / "apps" / id / "data.db");
    CopyAppFolder(in / "apps" / id, data / "apps" / id);
  }
  Print(json::object{{"data", args.data}, {"apps", manifest.at("apps").as_array().size()}, {"createdAt", manifest.at("createdAt")}});
  return 0;
}

}  // namespace crmd::cli
