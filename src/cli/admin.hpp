// What the commands of crmd's command line share: where this invocation's registry and stores
// are (`--data`, `--store`), and how a command prints its answer or its failure.
//
// Not thread-safe: set once by main() before a command runs.
#pragma once

#include <boost/json.hpp>
#include <memory>
#include <string>

#include "app/application.hpp"
#include "storage/registry_store.hpp"
#include "storage/stores.hpp"

namespace crmd::cli {

// This invocation's --store: a PostgreSQL URL, or empty for SQLite files under --data.
void SetStoreUrl(std::string url);
const std::string& StoreUrl();

// Where the registry is: the --store database, or `DATA/registry.db` (the folder is made).
std::string RegistryLocation(const std::string& data_dir);
std::unique_ptr<storage::RegistryStore> OpenRegistryOf(const std::string& data_dir);
// The stores of a command that opens applications: one reader, this invocation's --store.
app::StoreOptions AdminStores();
// The stores of this invocation, opened without the application layer (no system classes are
// made): for `app export` and `app import`, which copy a store as it is.
std::unique_ptr<storage::Stores> AdminStoresRaw(const std::string& data);

// A command's answer: one JSON line on stdout.
void Print(const boost::json::value& v);
// A command's failure: `crmd: <message>` on stderr; returns the exit code, 1.
int Fail(const std::string& message);
// API key and function names: 1-64 of [A-Za-z0-9._-].
bool IsValidKeyName(const std::string& name);

}  // namespace crmd::cli
