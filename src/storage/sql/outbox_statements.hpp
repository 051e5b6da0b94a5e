// The statements on a store's outbox of trigger activations (storage/outbox.hpp) that both stores
// run alike; see record_statements.hpp for how they are bound. Each store creates the table
// (`id` increasing, never reused; `lane`; `payload`), PostgreSQL with the columns of its claims.
#pragma once

#include <string>

#include "storage/sql/dialect.hpp"

namespace crmd::storage::sql {

inline constexpr const char* kOutboxTable = "_crmd_outbox";

// Binds lane, payload; returns the new id.
std::string AddOutbox(const Dialect& d);
// Binds id; returns id, lane, payload.
std::string GetOutbox(const Dialect& d);
// Binds payload, id.
std::string SetOutbox(const Dialect& d);
// Binds id.
std::string RemoveOutbox(const Dialect& d);
// Binds the id to read after, the most entries to return; returns id, lane, payload by id.
std::string ReadOutbox(const Dialect& d);

}  // namespace crmd::storage::sql
