#include <filesystem>

#include "storage/sqlite/connection.hpp"
#include "storage/sqlite/sqlite_store.hpp"
#include "storage/stores.hpp"

namespace crmd::storage {

namespace {

class SqliteFiles final : public Stores {
 public:
  SqliteFiles(std::string data_dir, Durability durability, int readers)
      : apps_(std::filesystem::path(std::move(data_dir)) / "apps"), durability_(durability), readers_(readers) {}

  std::unique_ptr<Database> Open(const std::string& app_id) override {
    std::filesystem::create_directories(apps_ / app_id);
    return OpenSqlite(Path(app_id), durability_, readers_);
  }

  bool HasOutboxEntries(const std::string& app_id) override { return storage::HasOutboxEntries(Path(app_id)); }

  void Remove(const std::string& app_id) override {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(Path(app_id) + suffix);
  }

  void BackupTo(const std::string& app_id, const std::string& path) override {
    sqlite::Connection c(Path(app_id), /*sync_full=*/true);
    auto st = c.Prepare("VACUUM INTO ?");
    st.Bind(1, path);
    st.Step();
  }

  std::int64_t StoreBytes(const std::string& app_id) override {
    std::int64_t bytes = 0;
    for (const char* suffix : {"", "-wal"}) {
      std::error_code ec;
      const auto size = std::filesystem::file_size(Path(app_id) + suffix, ec);
      if (!ec) bytes += static_cast<std::int64_t>(size);
    }
    return bytes;
  }

  std::vector<std::string> List() override {
    std::vector<std::string> ids;
    std::error_code ec;
    for (const auto& dir : std::filesystem::directory_iterator(apps_, ec))
      if (dir.is_directory() && std::filesystem::exists(dir.path() / "data.db", ec)) ids.push_back(dir.path().filename().string());
    return ids;
  }

 private:
  std::string Path(const std::string& app_id) const { return (apps_ / app_id / "data.db").string(); }

  std::filesystem::path apps_;
  Durability durability_;
  int readers_;
};

}  // namespace

std::unique_ptr<Stores> SqliteStores(std::string data_dir, Durability durability, int readers) {
  return std::make_unique<SqliteFiles>(std::move(data_dir), durability, readers);
}

}  // namespace crmd::storage
