// The PostgreSQL store (issue 22): one database holds every application, each in a schema of its
// own (`app_<appId>`), beside the `crmd` schema (the registry, the list of stores and the helper
// functions the where compiler calls). Only the composition root, storage::PostgresStores and
// tests name it; everything else sees a storage::Database.
#pragma once

#include <memory>
#include <string>

#include "storage/database.hpp"
#include "storage/postgres/connection.hpp"
#include "storage/postgres/pg_outbox_takeover.hpp"
#include "storage/postgres/pool.hpp"

namespace crmd::storage::postgres {

// The schema of an application (unquoted; shortened as QuoteName shortens when too long).
std::string SchemaOf(const std::string& app_id);

// Creates the `crmd` schema, its tables and helper functions unless they exist (idempotent, safe
// from several processes at once).
void EnsureCrmdSchema(Connection& c);

// The store of application `app_id`, whose schema is `schema` (made by Stores::Open); `takeover`
// is the server's share of the outboxes (pg_outbox_takeover.hpp).
std::unique_ptr<Database> OpenPostgres(std::shared_ptr<Pool> pool, std::shared_ptr<PgOutboxTakeover> takeover,
                                       const std::string& app_id, const std::string& schema);

// The channel a schema change is announced on (its payload: the application's id), at commit.
inline constexpr const char* kSchemaChannel = "crmd_schema";
// Issue 36: committed record writes, for LiveQuery subscribers on every server.
inline constexpr const char* kRecordsChannel = "crmd_records";

}  // namespace crmd::storage::postgres
