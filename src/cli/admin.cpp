#include "cli/admin.hpp"

#include <cctype>
#include <filesystem>
#include <iostream>

#include "storage/sqlite/sqlite_store.hpp"
#include "util/json.hpp"

namespace crmd::cli {

namespace json = boost::json;

namespace {
std::string g_store_url;
}  // namespace

void SetStoreUrl(std::string url) { g_store_url = std::move(url); }
const std::string& StoreUrl() { return g_store_url; }

std::string RegistryLocation(const std::string& data_dir) {
  std::filesystem::create_directories(data_dir);
  if (!g_store_url.empty()) return g_store_url;
  return (std::filesystem::path(data_dir) / "registry.db").string();
}

std::unique_ptr<storage::RegistryStore> OpenRegistryOf(const std::string& data_dir) {
  return storage::OpenRegistry(RegistryLocation(data_dir));
}

app::StoreOptions AdminStores() {
  app::StoreOptions options;
  options.durability = storage::Durability::kFull;
  options.readers = 1;
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

std::unique_ptr<storage::Stores> AdminStoresRaw(const std::string& data) {
  if (g_store_url.empty()) return storage::SqliteStores(data, storage::Durability::kFull, 1);
  return storage::PostgresStores(g_store_url, 2);
}

}  // namespace crmd::cli
