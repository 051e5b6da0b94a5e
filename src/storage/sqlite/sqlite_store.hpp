// The SQLite store (the embedded default): one file per application, opened by path. Only the
// composition root (main.cpp), storage::SqliteStores and tests name it; everything else sees a
// storage::Database.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "storage/database.hpp"

namespace crmd::storage {

// Opens (creating if needed) the SQLite store at `path`. Up to `readers` idle read connections
// are kept open between requests.
std::unique_ptr<Database> OpenSqlite(const std::string& path, Durability durability, int readers);

// Whether the SQLite store at `path` holds trigger activations, read without opening it as a store
// (after a restart, to find the applications with work left). False when there is no store.
bool HasOutboxEntries(const std::string& path);

// The memory the page caches of every open store may take together: each connection's cache is
// its share (a writer and a reader per open store), at most its default. A store's caches are
// sized as its connections open, readers again as they are taken from the pool.
void LimitPageCache(std::int64_t bytes);

}  // namespace crmd::storage
