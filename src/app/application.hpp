// One application (tenant) at run time: its store and its current schema snapshot.
//
// Thread-safe. Schema changes are published only by a writer that holds the store's write
// transaction, so "read snapshot after BeginWrite(), publish before the transaction ends" gives
// every writer the newest schema (write/ does exactly that).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "schema/class_schema.hpp"
#include "storage/database.hpp"

namespace crmd::app {

class Application {
 public:
  Application(std::string id, std::unique_ptr<storage::Database> db);

  const std::string& id() const { return id_; }
  storage::Database& db() { return *db_; }

  std::shared_ptr<const schema::Snapshot> schema() const;
  void Publish(std::shared_ptr<const schema::Snapshot> next);

 private:
  std::string id_;
  std::unique_ptr<storage::Database> db_;
  mutable std::mutex mutex_;
  std::shared_ptr<const schema::Snapshot> schema_;
};

struct StoreOptions {
  storage::Durability durability = storage::Durability::kFull;
  int readers = 4;
};

// Opens application stores on first use and keeps them open. Thread-safe.
class Applications {
 public:
  Applications(std::string data_dir, StoreOptions options);

  // `app_id` must already be known to the registry (callers check); it names a directory, so it
  // is validated again here.
  std::shared_ptr<Application> Open(const std::string& app_id);

 private:
  std::string data_dir_;
  StoreOptions options_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Application>, std::less<>> open_;
};

// [A-Za-z0-9_-]{1,64}: application ids become directory names.
bool IsValidAppId(std::string_view app_id);

}  // namespace crmd::app
