#include "storage/sqlite/outbox.hpp"
#include "storage/sqlite/sqlite_store.hpp"
#include "storage/sqlite/where_sql.hpp"
#include "storage/sql/outbox_statements.hpp"

#include <filesystem>

namespace crmd::storage::sqlite {

// The statements are those of sql/outbox_statements.hpp, each built once: in SQLite's dialect
// their text is the same for every store.

void CreateOutbox(Connection& c) {
  c.Exec(
      "CREATE TABLE IF NOT EXISTS _crmd_outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, "
      "lane INTEGER NOT NULL, payload TEXT NOT NULL)");
}

std::int64_t AddOutbox(Connection& c, int lane, std::string_view payload) {
  static const std::string kAdd = sql::AddOutbox(SqliteDialect());
  auto st = c.Prepare(kAdd);
  st.BindCell(1, Cell(std::int64_t{lane}));
  st.Bind(2, payload);
  if (!st.Step()) throw StorageError("sqlite: outbox insert returned no id");
  return std::get<std::int64_t>(st.Column(0));
}

std::optional<OutboxEntry> GetOutbox(Connection& c, std::int64_t id) {
  static const std::string kGet = sql::GetOutbox(SqliteDialect());
  auto st = c.Prepare(kGet);
  st.BindCell(1, Cell(id));
  if (!st.Step()) return std::nullopt;
  return OutboxEntry{std::get<std::int64_t>(st.Column(0)), static_cast<int>(std::get<std::int64_t>(st.Column(1))),
                     st.ColumnText(2)};
}

void SetOutbox(Connection& c, std::int64_t id, std::string_view payload) {
  static const std::string kSet = sql::SetOutbox(SqliteDialect());
  auto st = c.Prepare(kSet);
  st.Bind(1, payload);
  st.BindCell(2, Cell(id));
  st.Step();
}

void RemoveOutbox(Connection& c, std::int64_t id) {
  static const std::string kRemove = sql::RemoveOutbox(SqliteDialect());
  auto st = c.Prepare(kRemove);
  st.BindCell(1, Cell(id));
  st.Step();
}

std::vector<OutboxEntry> ReadOutbox(Connection& c, std::int64_t after, std::size_t limit) {
  std::vector<OutboxEntry> out;
  static const std::string kRead = sql::ReadOutbox(SqliteDialect());
  auto st = c.Prepare(kRead);
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
