#include "storage/sqlite/outbox.hpp"
#include "storage/sqlite/sqlite_store.hpp"

#include <filesystem>


namespace crmd::storage::sqlite {

void CreateOutbox(Connection& c) {
  c.Exec(
      "CREATE TABLE IF NOT EXISTS _crmd_outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, "
      "lane INTEGER NOT NULL, payload TEXT NOT NULL)");
}

std::int64_t AddOutbox(Connection& c, int lane, std::string_view payload) {
  auto st = c.Prepare("INSERT INTO _crmd_outbox(lane, payload) VALUES (?, ?) RETURNING id");
  st.BindCell(1, Cell(std::int64_t{lane}));
  st.Bind(2, payload);
  if (!st.Step()) throw StorageError("sqlite: outbox insert returned no id");
  return std::get<std::int64_t>(st.Column(0));
}

std::optional<OutboxEntry> GetOutbox(Connection& c, std::int64_t id) {
  auto st = c.Prepare("SELECT id, lane, payload FROM _crmd_outbox WHERE id = ?");
  st.BindCell(1, Cell(id));
  if (!st.Step()) return std::nullopt;
  return OutboxEntry{std::get<std::int64_t>(st.Column(0)), static_cast<int>(std::get<std::int64_t>(st.Column(1))),
                     st.ColumnText(2)};
}

void SetOutbox(Connection& c, std::int64_t id, std::string_view payload) {
  auto st = c.Prepare("UPDATE _crmd_outbox SET payload = ? WHERE id = ?");
  st.Bind(1, payload);
  st.BindCell(2, Cell(id));
  st.Step();
}

void RemoveOutbox(Connection& c, std::int64_t id) {
  auto st = c.Prepare("DELETE FROM _crmd_outbox WHERE id = ?");
  st.BindCell(1, Cell(id));
  st.Step();
}

std::vector<OutboxEntry> ReadOutbox(Connection& c, std::int64_t after, std::size_t limit) {
  std::vector<OutboxEntry> out;
  auto st = c.Prepare("SELECT id, lane, payload FROM _crmd_outbox WHERE id > ? ORDER BY id LIMIT ?");
  st.BindCell(1, Cell(after));
  st.BindCell(2, Cell(static_cast<std::int64_t>(limit)));
  while (st.Step())
    out.push_back({std::get<std::int64_t>(st.Column(0)), static_cast<int>(std::get<std::int64_t>(st.Column(1))),
                   st.ColumnText(2)});
  return out;
}

}  // namespace crmd::storage::sqlite

namespace crmd::storage {

bool HasOutboxEntries(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return false;
  sqlite::Connection c(path, /*sync_full=*/false);  // reads only
  {
    auto st = c.Prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_crmd_outbox'");
    if (!st.Step()) return false;
  }
  auto st = c.Prepare("SELECT EXISTS (SELECT 1 FROM _crmd_outbox)");
  return st.Step() && std::get<std::int64_t>(st.Column(0)) != 0;
}

}  // namespace crmd::storage
