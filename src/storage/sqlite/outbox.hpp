// The outbox of trigger activations in an application's SQLite store (storage::OutboxEntry):
//
//   _crmd_outbox(id INTEGER PRIMARY KEY AUTOINCREMENT, lane INTEGER NOT NULL, payload TEXT NOT NULL)
//
// AUTOINCREMENT: an id is never reused, so an activation removed and a later one are never taken
// for each other by a runner that still holds the first one's id.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/database.hpp"
#include "storage/sqlite/connection.hpp"

namespace crmd::storage::sqlite {

void CreateOutbox(Connection& c);
std::int64_t AddOutbox(Connection& c, int lane, std::string_view payload);
std::optional<OutboxEntry> GetOutbox(Connection& c, std::int64_t id);
void SetOutbox(Connection& c, std::int64_t id, std::string_view payload);
void RemoveOutbox(Connection& c, std::int64_t id);
std::vector<OutboxEntry> ReadOutbox(Connection& c, std::int64_t after, std::size_t limit);

}  // namespace crmd::storage::sqlite
