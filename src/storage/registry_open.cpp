#include "storage/registry_store.hpp"

namespace crmd::storage {

bool IsPostgresUrl(std::string_view location) {
  return location.starts_with("postgresql://") || location.starts_with("postgres://");
}

std::unique_ptr<RegistryStore> OpenRegistry(const std::string& location) {
  return IsPostgresUrl(location) ? OpenPostgresRegistry(location) : OpenSqliteRegistry(location);
}

std::optional<AppRecord> RegistryStore::Load(const std::string& app_id) {
  for (auto& app : LoadAll())
    if (app.app_id == app_id) return std::move(app);
  return std::nullopt;
}

}  // namespace crmd::storage
