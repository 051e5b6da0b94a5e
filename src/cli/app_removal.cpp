#include "cli/app_removal.hpp"

#include <filesystem>
#include <thread>

#include "auth/registry.hpp"
#include "cli/admin.hpp"
#include "storage/registry_store.hpp"
#include "storage/stores.hpp"

namespace crmd::cli {

namespace {
// Long enough for every running server's registry watcher to poll twice, so that none can miss
// the moment the application was gone (an `import --replace` makes it again at once, and a server
// that never saw the gap would keep serving the old store).
constexpr auto kServersLetGo = 3 * auth::Registry::kPollInterval;
}  // namespace

bool RemoveApplication(const std::string& data_dir, const std::string& app_id) {
  if (OpenRegistryOf(data_dir)->RemoveApp(app_id) != storage::RegistryChange::kDone) return false;
  std::this_thread::sleep_for(kServersLetGo);
  AdminStoresRaw(data_dir)->Remove(app_id);
  std::filesystem::remove_all(std::filesystem::path(data_dir) / "apps" / app_id);
  return true;
}

}  // namespace crmd::cli
