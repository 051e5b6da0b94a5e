// The PostgreSQL store (issue 22): one database holds every application, each in a schema of its
// own (`app_<appId>`), beside the `crmd` schema (the registry, the list of stores and the helper
// functions the where compiler calls). Only the composition root, storage::PostgresStores and
// tests name it; everything else sees a storage::Database.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "storage/database.hpp"
#include "storage/postgres/connection.hpp"
#include "storage/postgres/pg_outbox_takeover.hpp"
#include "storage/postgres/pool.hpp"

namespace crmd::storage::postgres {

// The schema of an application (unquoted; shortened as QuoteName shortens when too long).
std::string SchemaOf(const std::string& app_id);

// The layouts this release writes (issue 35): the registry's (schema `crmd`) in
// crmd.registry_version.format, each application's (its schema) in crmd.stores.format. 0 is a
// database made before 0.3.0 (ae6c27d among them). Kept in the database, where every server on it
// reads the same number, in rows the servers read anyway (docs/OPERATIONS.md, Upgrades); raised in
// the transaction that brings the layout up to date, under the advisory lock that makes it.
inline constexpr std::int64_t kRegistryFormat = 1;
inline constexpr std::int64_t kStoreFormat = 1;

// Creates the `crmd` schema, its tables and helper functions, or brings an older one up to date
// (idempotent, safe from several processes at once). Throws StorageError, in words, on a registry
// of a newer format.
void EnsureCrmdSchema(Connection& c);
// Throws StorageError, in words, when `format` (the registry's) is newer than this crmd's.
void CheckRegistryFormat(std::int64_t format);

// The store of application `app_id`, whose schema is `schema` (made by Stores::Open); `takeover`
// is the server's share of the outboxes (pg_outbox_takeover.hpp).
std::unique_ptr<Database> OpenPostgres(std::shared_ptr<Pool> pool, std::shared_ptr<PgOutboxTakeover> takeover,
                                       const std::string& app_id, const std::string& schema);

// The channel a schema change is announced on (its payload: the application's id), at commit.
inline constexpr const char* kSchemaChannel = "crmd_schema";
// Issue 36: committed record writes, for LiveQuery subscribers on every server.
inline constexpr const char* kRecordsChannel = "crmd_records";

}  // namespace crmd::storage::postgres
