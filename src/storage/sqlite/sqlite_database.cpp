// The SQLite store of one application: `DATA/apps/<appId>/data.db`.
//
// The tables of a class: class_tables.hpp. Class definitions live in
// `_crmd_schema(className, definition JSON)`; `_crmd_` is not a routable class name.
// WAL journal: readers never block the writer; writers take turns on one connection and share
// commits (group_commit.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <mutex>
#include <unordered_set>

#include "storage/class_definitions.hpp"
#include "storage/database.hpp"
#include "storage/group_transaction.hpp"
#include "storage/sqlite/sqlite_store.hpp"
#include "storage/sql/aggregate_statements.hpp"
#include "storage/sql/class_statements.hpp"
#include "storage/sql/record_statements.hpp"
#include "storage/sql/relation_statements.hpp"
#include "storage/sqlite/checkpointer.hpp"
#include "storage/sqlite/class_tables.hpp"
#include "storage/sqlite/connection.hpp"
#include "storage/count_cache.hpp"
#include "storage/sqlite/group_commit.hpp"
#include "storage/sqlite/grouped_top.hpp"
#include "storage/sqlite/outbox.hpp"
#include "storage/sqlite/where_sql.hpp"
#include "util/json.hpp"
#include "util/log.hpp"

namespace crmd::storage {

namespace sqlite {
namespace {

const sql::Dialect& kDialect = SqliteDialect();

// Reads select `t0.*` (sql::SelectRows): the table's columns are, by construction,
// sql::kOwnColumns followed by the class's stored fields in schema order (ADD COLUMN appends,
// DROP COLUMN removes, as the schema's field list does). The SQL text is then short and fixed per
// class, so the statement cache hits without rebuilding a column list; CheckLayout() proves the
// invariant on every read.
constexpr int kFixedColumns = static_cast<int>(sql::kOwnColumns.size());
constexpr int kAclColumn = 3, kNullsColumn = 6;

// One line of SQLite's EXPLAIN QUERY PLAN, read into `plan`: `SEARCH t0 USING [COVERING] INDEX
// uidx:<class>:<name> (...)`, `SCAN t0`, `USE TEMP B-TREE FOR ORDER BY`. Index names are crmd's
// (class_tables.cpp): `uidx:<class>:<declared name>`, `idx:<class>:<field>[:phonekey]`.
void ReadPlanLine(std::string_view line, const std::string& table, FindPlan& plan) {
  if (line == "SCAN t0") plan.full_scan = true;
  if (line.find("TEMP B-TREE") != std::string_view::npos) ++plan.sorts;
  const auto at = line.find("INDEX ");
  if (at == std::string_view::npos || line.find("USING") == std::string_view::npos) return;
  plan.covering = plan.covering || line.find("COVERING INDEX") != std::string_view::npos;
  std::string_view name = line.substr(at + 6);
  name = name.substr(0, name.find(' '));
  for (std::string prefix : {"uidx:" + table + ":", "idx:" + table + ":"})
    if (name.starts_with(prefix)) {
      name.remove_prefix(prefix.size());
      break;
    }
  plan.indexes.emplace_back(name);
}

// The statement cache's key of a write of `columns` to `table` (`kind`: 'I' insert, 'U' update):
// the names alone. Building and hashing the SQL text itself cost a product-base create ~25,000
// instructions (its Accounts insert names 24 columns, ~900 characters); this, a tenth of it.
std::string ColumnsKey(char kind, std::string_view table, const std::vector<std::string>& columns) {
  std::size_t size = table.size() + 1;
  for (const auto& column : columns) size += column.size() + 1;
  std::string key;
  key.reserve(size);
  key.push_back(kind);
  key.append(table);
  for (const auto& column : columns) {
    key.push_back('\0');  // no name holds it (schema::IsValidFieldName)
    key.append(column);
  }
  return key;
}

std::size_t CellCount(const schema::ClassSchema& cls) {
  std::size_t n = 0;
  for (const auto& [name, def] : cls.fields) n += def.type != schema::FieldType::kRelation;
  return n;
}

// Refuses to read rows whose columns do not line up with the schema: a wrong answer is worse
// than a 500. Call after a Step() that returned a row: a statement cached before an ALTER TABLE
// reports its old columns until SQLite re-prepares it at that step.
// New columns are appended last, so the table and the snapshot may differ by trailing columns
// only: a read that took the schema just before a write unit committed new fields sees a table
// ahead of it (the new columns are not read), and a table behind its snapshot reads the missing
// fields as absent.
void CheckLayout(const Statement& st, const schema::ClassSchema& cls) {
  const int columns = st.ColumnCount();
  bool ok = true;
  int i = kFixedColumns;
  for (const auto& [name, def] : cls.fields) {
    if (!ok || i >= columns) break;
    if (def.type == schema::FieldType::kRelation) continue;
    ok = st.ColumnName(i++) == name;
  }
  if (!ok) throw StorageError("sqlite: the columns of " + cls.name + " do not match its schema");
}

std::vector<std::string> ParseNulls(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 1;
  while (start < text.size()) {
    auto end = text.find(',', start);
    if (end == std::string::npos) break;
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Fills `row` from the current result row, reusing the strings it already holds: a find reads
// every row into the same Row, so its text cells are copied without an allocation each.
// The columns every class's table starts with (kFixedColumns), into `row`'s own members.
void ReadOwnColumns(const Statement& st, Row& row) {
  row.object_id.assign(st.ColumnView(0));
  row.created_at.assign(st.ColumnView(1));
  row.updated_at.assign(st.ColumnView(2));
  if (st.ColumnIsNull(kAclColumn)) row.acl.reset();
  else if (row.acl) row.acl->assign(st.ColumnView(kAclColumn));
  else row.acl.emplace(st.ColumnView(kAclColumn));
  row.nulls.clear();
  if (!st.ColumnIsNull(kNullsColumn)) row.nulls = ParseNulls(st.ColumnText(kNullsColumn));
}

void ReadRowInto(const Statement& st, std::size_t cell_count, Row& row) {
  ReadOwnColumns(st, row);
  row.cells.resize(cell_count);
  const std::size_t present = static_cast<std::size_t>(st.ColumnCount() - kFixedColumns);
  for (std::size_t i = 0; i < cell_count; ++i) {
    Cell& cell = row.cells[i];
    const int column = kFixedColumns + static_cast<int>(i);
    if (i >= present) {
      cell = std::monostate{};
      continue;
    }
    switch (st.ColumnType(column)) {
      case SQLITE_NULL: cell = std::monostate{}; break;
      case SQLITE_INTEGER:
      case SQLITE_FLOAT: cell = st.Column(column); break;
      default:
        if (auto* text = std::get_if<std::string>(&cell)) text->assign(st.ColumnView(column));
        else cell.emplace<std::string>(st.ColumnView(column));
    }
  }
}

// ReadRowInto for the cells of `fields` only (the others absent; names that are no stored field
// are ignored), after checking that their columns, and only theirs, are where the schema puts them:
// an update reads a row's ACL and the few values its operators start from, and spends nothing on
// the rest.
void ReadFieldsInto(const Statement& st, const schema::ClassSchema& cls,
                    const std::vector<std::string_view>& fields, Row& row) {
  ReadOwnColumns(st, row);
  row.cells.assign(CellCount(cls), std::monostate{});
  const int columns = st.ColumnCount();
  // One pass over the class: a long body is not matched against a wide class key by key.
  const bool hashed = fields.size() > 8;
  const std::unordered_set<std::string_view> wanted =
      hashed ? std::unordered_set<std::string_view>(fields.begin(), fields.end())
             : std::unordered_set<std::string_view>();
  std::size_t i = 0;
  for (const auto& [name, def] : cls.fields) {
    if (def.type == schema::FieldType::kRelation) continue;
    const std::size_t cell = i++;
    if (hashed ? !wanted.contains(name) : std::find(fields.begin(), fields.end(), name) == fields.end()) continue;
    const int column = kFixedColumns + static_cast<int>(cell);
    if (column >= columns) {
      // Absent only if the table lags the schema by its last fields; any other gap is a broken
      // layout.
      CheckLayout(st, cls);
      continue;
    }
    if (st.ColumnName(column) != name)
      throw StorageError("sqlite: the columns of " + cls.name + " do not match its schema");
    if (st.ColumnType(column) == SQLITE_NULL) continue;
    row.cells[cell] = st.Column(column);
  }
}

Row ReadRow(const Statement& st, std::size_t cell_count) {
  Row row;
  ReadRowInto(st, cell_count, row);
  return row;
}

// The page's rows. A sorted page is found first as rowids (the sort then carries the sort keys and
// a rowid, not whole rows: thousands of matches of a filter are sorted to keep 100), and only the
// page's rows are then read whole. Placeholders: the where's, the order's (numbered, as the order is
// written twice), then LIMIT, then OFFSET. `_rowid_`, not `rowid`: a class may declare a field
// named rowid, never one starting with an underscore.
std::string FindSql(const schema::ClassSchema& cls, const schema::Query& query, SqlFragment& where) {
  where = CompileWhere(query, cls);
  const std::string select = sql::SelectRows(kDialect, cls.name), order = sql::CompileOrder(kDialect, query, where.params);
  if (order.empty()) return sql::FindPage(kDialect, select, where, order);
  return fmt::format("{0} WHERE t0._rowid_ IN (SELECT t0._rowid_ FROM {1} AS t0 WHERE {2}{3} LIMIT ? OFFSET ?){3}",
                     select, kDialect.Table(cls.name), where.sql, order);
}

// A page found by FindGroupedTop (grouped_top.hpp), its rows read in one statement. False when
// the runs do not pay for this query and the plain statement must run.
bool RunGroupedTop(Connection& c, const schema::ClassSchema& cls, const schema::Query& query,
                   const GroupedTopPlan& plan, const RowSink& sink) {
  const std::string table = Quote(cls.name);
  const auto page = FindGroupedTop(c, cls, query, plan);
  if (!page) return false;
  if (page->empty()) return true;
  boost::json::array rowids;
  for (const auto& row : *page) rowids.emplace_back(row.rowid);
  // CROSS JOIN keeps json_each the outer loop, so the rows come in the list's order; an ORDER BY
  // would sort whole rows again.
  auto st = c.Prepare(fmt::format("SELECT t0.* FROM json_each(?) AS j CROSS JOIN {} AS t0 ON t0._rowid_ = j.value", table));
  st.Bind(1, ToJson(rowids));
  const std::size_t cells = CellCount(cls);
  PageOrder order(*page);
  bool first = true;
  Row row;
  while (!order.Done() && st.Step()) {
    if (first) CheckLayout(st, cls);
    first = false;
    ReadRowInto(st, cells, row);
    if (!order.Add(row, sink)) return true;
  }
  if (!order.Done()) throw StorageError("sqlite: a row of " + cls.name + " left its read snapshot");
  return true;
}

void RunFind(Connection& c, const schema::ClassSchema& cls, const schema::Query& query, const RowSink& sink) {
  if (const auto plan = PlanGroupedTop(cls, query)) {
    ReadSnapshot snapshot(c);
    if (RunGroupedTop(c, cls, query, *plan, sink)) return;
  }
  SqlFragment where;
  const std::string sql = FindSql(cls, query, where);
  const std::size_t cells = CellCount(cls);
  auto st = c.Prepare(sql);
  st.BindAll(where.params);
  const int next = static_cast<int>(where.params.size()) + 1;
  // LIMIT -1 is "no limit" in SQLite; the record API has no maximum (spec §4.2).
  st.BindCell(next, Cell(query.limit < 0 ? std::int64_t{-1} : query.limit));
  st.BindCell(next + 1, Cell(query.skip));
  bool first = true;
  Row row;
  while (st.Step()) {
    if (first) CheckLayout(st, cls);
    first = false;
    ReadRowInto(st, cells, row);
    if (!sink(row)) break;
  }
}

// sql::GetById's text over sql::SelectRows', written into one string: every get-by-id builds it to
// find its cached statement, and the general builders' temporaries (five strings, three calls
// through the dialect) were 1.5% of a get's instructions.
Statement PrepareGetRow(Connection& c, const schema::ClassSchema& cls) {
  std::string sql;
  sql.reserve(cls.name.size() + 48);
  sql += "SELECT t0.* FROM ";
  AppendQuoted(cls.name, sql);
  sql += " AS t0 WHERE t0.\"objectId\" = ?";
  return c.Prepare(sql);
}

std::optional<Row> GetRow(Connection& c, const schema::ClassSchema& cls, std::string_view id) {
  auto st = PrepareGetRow(c, cls);
  st.Bind(1, id);
  if (!st.Step()) return std::nullopt;
  CheckLayout(st, cls);
  return ReadRow(st, CellCount(cls));
}

std::optional<Row> GetRowFields(Connection& c, const schema::ClassSchema& cls, std::string_view id,
                                const std::vector<std::string_view>& fields) {
  auto st = PrepareGetRow(c, cls);
  st.Bind(1, id);
  if (!st.Step()) return std::nullopt;
  Row row;
  ReadFieldsInto(st, cls, fields, row);
  return row;
}

// A write, in one of three forms: a member of the current commit group (group_commit.hpp), a
// savepoint of a write group's open transaction, or exclusive.
class SqliteWriteTransaction final : public WriteTransaction, public OutboxWrites {
 public:
  // Grouped form: a member of the commit group for as long as it lives.
  SqliteWriteTransaction(GroupCommit& group, Connection& c)
      : group_(&group), lock_(group.Enter(kSavepoint)), c_(c) {}

  // Write-group form: the group holds the connection; this write is a savepoint of its
  // transaction, kept by Commit() and made durable by the group's flush.
  explicit SqliteWriteTransaction(Connection& c) : c_(c), in_write_group_(true) { c_.Run("SAVEPOINT item"); }

  // Exclusive form: alone on the connection until destroyed.
  SqliteWriteTransaction(GroupCommit& group, std::unique_lock<std::mutex> lock, Connection& c)
      : exclusive_of_(&group), lock_(std::move(lock)), c_(c) {
    c_.Exec("BEGIN IMMEDIATE");
  }

  bool Exclusive() const override { return exclusive_of_ != nullptr; }

  ~SqliteWriteTransaction() override {
    if (committed_) return;
    if (group_) {
      group_->Leave(lock_, kSavepoint, /*keep=*/false);
      return;
    }
    try {
      c_.Exec(in_write_group_ ? "ROLLBACK TO item; RELEASE item" : "ROLLBACK");
    } catch (const StorageError&) {
      // Already undone (SQLite rolls the transaction back on some errors); nothing to do.
    }
  }

  OutboxWrites& outbox() override { return *this; }
  std::int64_t AddOutbox(int lane, std::string_view payload) override { return sqlite::AddOutbox(c_, lane, payload); }
  std::optional<OutboxEntry> GetOutbox(std::int64_t id) override { return sqlite::GetOutbox(c_, id); }
  void SetOutbox(std::int64_t id, std::string_view payload) override { sqlite::SetOutbox(c_, id, payload); }
  void RemoveOutbox(std::int64_t id) override { sqlite::RemoveOutbox(c_, id); }

  void OpenSavepoint() override {
    c_.Run("SAVEPOINT nested");
    ++savepoints_;
  }
  void ReleaseSavepoint() override {
    if (savepoints_ == 0) throw StorageError("sqlite: no savepoint to release");
    --savepoints_;
    c_.Run("RELEASE nested");
  }
  void RollbackSavepoint() override {
    if (savepoints_ == 0) throw StorageError("sqlite: no savepoint to roll back");
    --savepoints_;
    try {
      c_.Exec("ROLLBACK TO nested; RELEASE nested");
    } catch (const StorageError&) {
      // SQLite undid the whole transaction already; its Commit() reports that.
    }
  }

  void SaveClass(const schema::ClassSchema* before, const schema::ClassSchema& after) override {
    if (before) AlterClassTables(c_, *before, after);
    else CreateClassTables(c_, after);
    auto st = c_.Prepare(sql::SaveClass(kDialect));
    st.Bind(1, after.name);
    st.Bind(2, ToJson(after.ToJson()));
    st.Step();
  }

  void Insert(const schema::ClassSchema& cls, const std::vector<std::string>& columns,
              const Row& row) override {
    // A repeated id fails this statement and leaves the transaction open (SQLite's ABORT).
    auto st = c_.PrepareByKey(ColumnsKey('I', cls.name, columns),
                              [&] { return sql::InsertRow(kDialect, cls.name, columns, sql::OnDuplicateId::kFail); });
    // Bound in place: `row` outlives `st`.
    st.BindInPlace(1, row.object_id);
    st.BindInPlace(2, row.created_at);
    BindOwn(st, row, 3);
    for (std::size_t i = 0; i < columns.size(); ++i)
      st.BindCellInPlace(sql::kInsertFirstValue + static_cast<int>(i), row.cells[i]);
    st.Step();
  }

  void Update(const schema::ClassSchema& cls, const std::vector<std::string>& columns,
              const Row& row) override {
    auto st = c_.PrepareByKey(ColumnsKey('U', cls.name, columns), [&] { return sql::UpdateRow(kDialect, cls.name, columns); });
    // Bound in place: `row` outlives `st`.
    BindOwn(st, row, 1);
    const int first = sql::kUpdateFirstValue;
    for (std::size_t i = 0; i < columns.size(); ++i) st.BindCellInPlace(first + static_cast<int>(i), row.cells[i]);
    st.BindInPlace(first + static_cast<int>(columns.size()), row.object_id);
    st.Step();
  }

  void ChangeRelation(const schema::ClassSchema& cls, std::string_view field, std::string_view owning_id,
                      const std::vector<std::string>& related_ids, bool add) override {
    const std::string table = JoinTable(field, cls.name);
    auto st = c_.Prepare(add ? "INSERT OR IGNORE INTO " + table + " (owningId, relatedId) VALUES (?, ?)"
                             : "DELETE FROM " + table + " WHERE owningId = ? AND relatedId = ?");
    for (const auto& id : related_ids) {
      st.Bind(1, owning_id);
      st.Bind(2, id);
      st.Step();
      st.Reset();
    }
  }

  void DropClass(const schema::ClassSchema& cls) override {
    DropClassTables(c_, cls);
    auto st = c_.Prepare(sql::DropClass(kDialect));
    st.Bind(1, cls.name);
    st.Step();
  }

  std::int64_t Count(const schema::ClassSchema& cls) override {
    auto st = c_.Prepare(sql::CountRows(kDialect, cls.name));
    st.Step();
    return std::get<std::int64_t>(st.Column(0));
  }

  std::vector<Row> FindByPhoneKey(const schema::ClassSchema& cls, std::string_view field, std::string_view key,
                                  std::size_t limit) override {
    auto st = c_.Prepare(fmt::format("SELECT objectId, createdAt, {0} FROM {1} WHERE crmd_phone_key({0}) = ? LIMIT ?",
                                     Quote(field), Quote(cls.name)));
    st.Bind(1, key);
    st.BindCell(2, Cell{static_cast<std::int64_t>(limit)});
    std::vector<Row> rows;
    while (st.Step()) {
      Row row;
      row.object_id = st.ColumnText(0);
      row.created_at = st.ColumnText(1);
      row.cells.push_back(st.Column(2));
      rows.push_back(std::move(row));
    }
    return rows;
  }

  bool Delete(const schema::ClassSchema& cls, std::string_view object_id) override {
    for (const auto& [field, def] : cls.fields) {
      if (def.type != schema::FieldType::kRelation) continue;
      auto st = c_.Prepare(sql::UnlinkOwner(kDialect, cls.name, field));
      st.Bind(1, object_id);
      st.Step();
    }
    auto st = c_.Prepare(sql::DeleteRow(kDialect, cls.name));
    st.Bind(1, object_id);
    st.Step();
    return c_.Changes() > 0;  // the row's own; what the text index's triggers delete is not counted
  }

  std::int64_t UpdateWhere(const schema::ClassSchema& cls, const schema::Expr& where,
                           const std::vector<std::string>& columns, const std::vector<Cell>& cells) override {
    const SqlFragment update = sql::UpdateWhere(kDialect, cls, where, columns, cells);
    auto st = c_.Prepare(update.sql);
    st.BindAll(update.params);
    st.Step();
    return c_.Changes();
  }

  // The where compiled once: an update on a timeline class ran the compiler every time (~13,000
  // instructions of a product-base update).
  std::int64_t ClearNewestHistoryRow(const schema::ClassSchema& history, std::string_view class_name,
                                     std::string_view object_id) override {
    auto st = c_.PrepareByKey(ColumnsKey('L', history.name, {}), [&] { return sql::ClearNewestHistoryRow(kDialect, history.name); });
    st.BindCell(1, Cell{std::int64_t{0}});
    st.Bind(2, object_id);
    st.Bind(3, class_name);
    st.BindCell(4, Cell{std::int64_t{1}});
    st.Step();
    return c_.Changes();
  }

  std::int64_t SetAclWhere(const schema::ClassSchema& cls, const schema::Expr& where,
                           const std::optional<std::string>& acl) override {
    const SqlFragment update = sql::SetAclWhere(kDialect, cls, where, acl);
    auto st = c_.Prepare(update.sql);
    st.BindAll(update.params);
    st.Step();
    return c_.Changes();
  }

  std::optional<Row> Get(const schema::ClassSchema& cls, std::string_view object_id) override {
    return GetRow(c_, cls, object_id);
  }

  std::optional<Row> GetFields(const schema::ClassSchema& cls, std::string_view object_id,
                               const std::vector<std::string_view>& fields) override {
    return GetRowFields(c_, cls, object_id, fields);
  }

  bool Exists(const schema::ClassSchema& cls, std::string_view object_id) override {
    auto st = c_.Prepare(sql::RowExists(kDialect, cls.name));
    st.Bind(1, object_id);
    return st.Step();
  }

  void Find(const schema::ClassSchema& cls, const schema::Query& query, const RowSink& sink) override {
    RunFind(c_, cls, query, sink);
  }

  std::optional<Reference> FindReference(const schema::Snapshot& classes,
                                         std::string_view target_class,
                                         std::string_view object_id,
                                         const std::vector<std::string_view>& ignored) override {
    for (const auto& [name, cls] : classes.classes()) {
      if (std::find(ignored.begin(), ignored.end(), name) != ignored.end()) continue;
      for (const auto& [field, def] : cls->fields) {
        if (def.type != schema::FieldType::kPointer || def.target_class != target_class) continue;
        auto st = c_.Prepare(sql::FindReference(kDialect, name, field));
        st.Bind(1, object_id);
        if (st.Step()) return Reference{name, field};
      }
    }
    return std::nullopt;
  }

  void Commit() override {
    if (savepoints_ != 0) throw StorageError("sqlite: commit with a savepoint still open");
    if (group_) {
      committed_ = true;
      group_->Leave(lock_, kSavepoint, /*keep=*/true);  // returns when durable
    } else {
      c_.Run(in_write_group_ ? "RELEASE item" : "COMMIT");
      committed_ = true;
      if (exclusive_of_) exclusive_of_->NoteCommit();
    }
  }

 private:
  // updatedAt, _acl, _rperm, _wperm, _nulls from `first` on, in that order (sql::InsertRow,
  // sql::UpdateRow). `row`'s own text is bound in place: it must outlive `st`.
  static void BindOwn(Statement& st, const Row& row, int first) {
    st.BindInPlace(first, row.updated_at);
    if (row.acl) st.BindInPlace(first + 1, *row.acl);
    else st.BindNull(first + 1);
    st.BindCell(first + 2, sql::Permissions(kDialect, row.acl, "read"));
    st.BindCell(first + 3, sql::Permissions(kDialect, row.acl, "write"));
    st.BindCell(first + 4, sql::Nulls(kDialect, row.nulls));
  }

  static constexpr const char* kSavepoint = "w";
  GroupCommit* group_ = nullptr;
  GroupCommit* exclusive_of_ = nullptr;  // the exclusive form: whose commits it counts
  std::unique_lock<std::mutex> lock_;
  Connection& c_;
  bool in_write_group_ = false;
  bool committed_ = false;
  int savepoints_ = 0;  // nested savepoints open
};

// The page cache budget of all stores (LimitPageCache; 0: none), and the stores open.
std::atomic<std::int64_t> g_cache_budget{0};
std::atomic<int> g_open_stores{0};
// SQLite's default for the writer; a reader's cache holds the B-tree's upper levels and little
// else (rows are spread over far more pages than any cache; the OS page cache serves those), and
// every reader has its own. The upper levels of a 100,000-row class (its table and objectId
// index) are ~70 pages: 512 KiB each holds them and keeps the process small.
constexpr int kWriterCacheKib = 2000;
constexpr int kReaderCacheKib = 512;
constexpr int kLeastCacheKib = 64;

// A connection's share of the budget: the budget over a writer and a reader per open store, in
// powers of two (so that one store more or less does not resize every cache), at most `kib`.
int CacheKib(int kib) {
  const std::int64_t budget = g_cache_budget.load(std::memory_order_relaxed);
  if (budget <= 0) return kib;
  const std::int64_t share = budget / 1024 / (2 * std::max(1, g_open_stores.load(std::memory_order_relaxed)));
  if (share >= kib) return kib;
  int fit = kLeastCacheKib;
  while (fit * 2 <= share) fit *= 2;
  return fit;
}

// A log this long is copied into the database before its store closes.
constexpr std::uintmax_t kLongLogBytes = 1u << 20;

// The layout of a store this release writes (issue 35), kept in SQLite's user_version: 0 is every
// store before 0.3.0 (ae6c27d among them). An older store is brought up to date as it opens (the
// tables above, then write::PrepareApplication) and marked; a newer one is refused in words.
constexpr std::int64_t kStoreFormat = 1;

class SqliteDatabase final : public Database {
 public:
  SqliteDatabase(std::string path, Durability durability, int readers)
      : path_(std::move(path)), sync_full_(durability == Durability::kFull), max_readers_(readers) {
    // The writer opens with the first write (Writer()): each connection parses the whole SQLite
    // schema on its first statement (a product-base store's 118 tables and 788 indexes: ~2 ms),
    // and a store opened to answer a read needs only the reader that read uses. A store that lacks
    // crmd's own tables (a new file) or is of an older format is brought up to date now, a newer
    // format refused now.
    // The tables are looked up in the schema SQLite has parsed already, not by reading
    // sqlite_schema again: that scan went over every table and index of the store (~900 rows for
    // the product base), ran past the steps a read's deadline is checked after, and a cold open
    // that had waited for the CPU was then abandoned and started over.
    bool current = false;
    {
      auto reader = Acquire();
      std::int64_t format = 0;
      {
        auto st = reader->Prepare("PRAGMA user_version");
        if (!st.Step()) throw StorageError("sqlite: cannot read the format of " + path_);
        format = std::get<std::int64_t>(st.Column(0));
      }
      if (format > kStoreFormat) CheckFormat(*reader, path_, kStoreFormat, "store");  // refuses it
      current = format == kStoreFormat && reader->HasTable("_crmd_schema") && reader->HasTable("_crmd_outbox");
    }
    if (!current) Writer();
  }

  ~SqliteDatabase() override {
    // Connections close without a checkpoint (Connection): a short log costs the next open little
    // (it reads the log to index it), a long one is copied now, and the log file cut to nothing.
    // A store only read since it opened left its log as it found it.
    if (!writer_) return;
    std::error_code ec;
    const auto log_bytes = std::filesystem::file_size(path_ + "-wal", ec);
    if (ec || log_bytes < kLongLogBytes) return;
    try {
      writer_->c->Exec("PRAGMA wal_checkpoint(TRUNCATE)");
    } catch (const std::exception& e) {
      log::Warn("checkpoint before closing a store failed", {{"path", path_}, {"error", e.what()}});
    }
  }

  std::vector<ClassDefinition> LoadSchema() override {
    std::vector<ClassDefinition> out;
    auto reader = Acquire();
    auto st = reader->Prepare(sql::LoadClasses(kDialect));
    while (st.Step()) out.push_back(ReadClassDefinition(st.ColumnView(0), path_));
    return out;
  }

  std::unique_ptr<WriteTransaction> BeginWrite(bool exclusive) override {
    Writers& w = Writer();
    if (exclusive) return std::make_unique<SqliteWriteTransaction>(*w.group, w.group->Exclusive(), *w.c);
    return std::make_unique<SqliteWriteTransaction>(*w.group, *w.c);
  }

  std::optional<Row> Get(const schema::ClassSchema& cls, std::string_view object_id) override {
    auto reader = Acquire();
    return GetRow(*reader, cls, object_id);
  }

  RowSet GetMany(const schema::ClassSchema& cls, const std::vector<std::string>& ids) override {
    RowSet out{StoredColumns(cls), {}};
    if (ids.empty()) return out;
    auto reader = Acquire();
    const SqlFragment many = sql::GetMany(kDialect, sql::SelectRows(kDialect, cls.name), ids);
    auto st = reader->Prepare(many.sql);
    st.BindAll(many.params);
    while (st.Step()) {
      if (out.rows.empty()) CheckLayout(st, cls);
      out.rows.push_back(ReadRow(st, out.columns.size()));
    }
    return out;
  }

  void Find(const schema::ClassSchema& cls, const schema::Query& query, const RowSink& sink) override {
    auto reader = Acquire();
    RunFind(*reader, cls, query, sink);
  }

  std::vector<std::string> RelationOwners(const schema::ClassSchema& cls, std::string_view field,
                                          const std::vector<std::string>& related_ids) override {
    std::vector<std::string> owners;
    if (related_ids.empty()) return owners;
    const SqlFragment owners_of = sql::RelationOwners(kDialect, cls.name, field, related_ids);
    auto reader = Acquire();
    auto st = reader->Prepare(owners_of.sql);
    st.BindAll(owners_of.params);
    while (st.Step()) owners.push_back(st.ColumnText(0));
    return owners;
  }

  std::int64_t Count(const schema::ClassSchema& cls, const schema::Query& query) override {
    SqlFragment where = CompileWhere(query, cls);
    const std::string count_sql = sql::CountWhere(kDialect, cls.name, where.sql);
    std::string key = CountCache::Key(count_sql, where.params);
    const std::uint64_t commits = Commits();  // before the read starts: see count_cache.hpp
    if (auto cached = counts_.Find(key, commits)) return *cached;
    auto reader = Acquire();
    auto st = reader->Prepare(count_sql);
    st.BindAll(where.params);
    st.Step();
    const auto count = std::get<std::int64_t>(st.Column(0));
    counts_.Store(std::move(key), commits, count);
    return count;
  }

  std::vector<std::vector<Cell>> Aggregate(const schema::ClassSchema& cls, const schema::AggregatePlan& plan) override {
    const SqlFragment aggregate = sql::AggregateRows(kDialect, cls, plan);
    auto reader = Acquire();
    auto st = reader->Prepare(aggregate.sql);
    st.BindAll(aggregate.params);
    std::vector<std::vector<Cell>> rows;
    const int width = plan.distinct ? 1 : 1 + static_cast<int>(plan.accumulators.size());
    while (st.Step()) {
      std::vector<Cell> row;
      for (int i = 0; i < width; ++i) row.push_back(st.Column(i));
      rows.push_back(std::move(row));
    }
    return rows;
  }

  FindPlan ExplainFind(const schema::ClassSchema& cls, const schema::Query& query) override {
    SqlFragment where;
    const std::string sql = "EXPLAIN QUERY PLAN " + FindSql(cls, query, where);
    auto reader = Acquire();
    auto st = reader->Prepare(sql);
    st.BindAll(where.params);
    const int next = static_cast<int>(where.params.size()) + 1;
    st.BindCell(next, Cell(query.limit));
    st.BindCell(next + 1, Cell(query.skip));
    FindPlan plan;
    while (st.Step()) {
      const std::string line = st.ColumnText(3);
      plan.text += line + "\n";
      ReadPlanLine(line, cls.name, plan);
    }
    return plan;
  }

  bool EnsurePhoneKeyIndex(const schema::ClassSchema& cls, std::string_view field) override {
    const std::string name = PhoneKeyIndexName(cls.name, field);
    {
      // Asked of the parsed schema (a lookup by name) rather than by a scan of sqlite_schema: every
      // open of a store with Contacts asks.
      auto reader = Acquire();
      auto st = reader->Prepare("SELECT 1 FROM pragma_index_info(?)");
      st.Bind(1, std::string_view(name).substr(1, name.size() - 2));  // unquoted
      if (st.Step()) return false;
    }
    Writers& w = Writer();
    auto lock = w.group->Exclusive();
    w.c->Exec(fmt::format("CREATE INDEX IF NOT EXISTS {} ON {} (crmd_phone_key({}))", name, Quote(cls.name), Quote(field)));
    return true;
  }

  std::vector<OutboxEntry> ReadOutbox(std::int64_t after, std::size_t limit) override {
    auto reader = Acquire();
    return sqlite::ReadOutbox(*reader, after, limit);
  }

  bool CheckIntegrity() override {
    Writers& w = Writer();
    auto lock = w.group->Exclusive();
    auto st = w.c->Prepare("PRAGMA integrity_check");
    return st.Step() && st.ColumnText(0) == "ok";
  }

 private:
  // A reader connection lent for one read; returned to the pool by the deleter.
  struct Return {
    SqliteDatabase* db;
    void operator()(Connection* c) const {
      std::unique_ptr<Connection> owned(c);
      if (c->InTransaction()) return;  // a read snapshot that failed to end: never lent again
      std::lock_guard lock(db->pool_mutex_);
      if (static_cast<int>(db->idle_.size()) < db->max_readers_) db->idle_.push_back(std::move(owned));
    }
  };
  using Lease = std::unique_ptr<Connection, Return>;

  // Never waits: one request may hold two connections at once (a streaming find and the include
  // lookups of its rows), so a hard cap could deadlock. max_readers_ bounds the idle ones kept.
  Lease Acquire() {
    {
      std::lock_guard lock(pool_mutex_);
      if (!idle_.empty()) {
        Connection* c = idle_.back().release();
        idle_.pop_back();
        Lease lease(c, Return{this});
        lease->FitCache(CacheKib(kReaderCacheKib));  // the stores open may have changed
        return lease;
      }
    }
    auto reader = std::make_unique<Connection>(path_, sync_full_);
    reader->FitCache(CacheKib(kReaderCacheKib));
    reader->BoundReads();
    return Lease(reader.release(), Return{this});
  }

  // The store's half of a write group: one member of a commit group, opened by the first write
  // after each commit and holding the connection until the next. It has no savepoint of its own
  // (it is never rolled back as a whole), so each write's savepoint is the outermost one: SQLite
  // empties the sub-journal, where a savepoint keeps the pages it changes, at each write's end.
  // Under one savepoint for the whole group the sub-journal outgrew its 64 KiB in memory with a
  // dozen creates and went to a temporary file: created, written page by page and deleted per
  // group, 22 pwrite()s per create.
  class QueueGroup final : public GroupTransaction {
   public:
    explicit QueueGroup(SqliteDatabase* db) : db_(db) {}
    ~QueueGroup() override { Commit(); }
    std::unique_ptr<WriteTransaction> BeginWrite(bool exclusive) override {
      if (exclusive) return db_->BeginWrite(/*exclusive=*/true);
      Writers& w = db_->Writer();
      if (!lock_.owns_lock()) lock_ = w.group->Enter(/*savepoint=*/nullptr);
      return std::make_unique<SqliteWriteTransaction>(*w.c);
    }
    // Both only ever asked of a group that began a write, so the writer is open.
    bool Lost() const override { return lock_.owns_lock() && !db_->Writer().c->InTransaction(); }
    bool ExclusiveWaiting() const override {
      const Writers* w = db_->writer_ready_.load(std::memory_order_acquire);
      return w && w->group->ExclusiveWaiting();
    }
    CommitOutcome Commit() override {
      if (!lock_.owns_lock()) return CommitOutcome::kDurable;
      auto outcome = CommitOutcome::kDurable;
      try {
        db_->Writer().group->Leave(lock_, /*savepoint=*/nullptr, /*keep=*/true);  // returns when durable
      } catch (const std::exception& e) {
        outcome = CommitOutcome::kFailed;  // SQLite's COMMIT is a call in this process: never unknown
        log::Error("write group commit failed", {{"store", db_->path_}, {"error", e.what()}});
      }
      if (lock_.owns_lock()) lock_.unlock();
      return outcome;
    }

   private:
    SqliteDatabase* db_;
    std::unique_lock<std::mutex> lock_;
  };
  std::unique_ptr<GroupTransaction> BeginGroupTransaction() override { return std::make_unique<QueueGroup>(this); }

  // First: counted while any of its connections is open.
  struct Counted {
    Counted() { g_open_stores.fetch_add(1, std::memory_order_relaxed); }
    ~Counted() { g_open_stores.fetch_sub(1, std::memory_order_relaxed); }
  } counted_;
  std::string path_;
  bool sync_full_;
  int max_readers_;
  // Before writer_, so it outlives the writer's commits, which report to it.
  Checkpointer checkpointer_{path_, sync_full_, Checkpointer::Limits{}};
  // The writer connection and its commit group, opened by the first write (Writer()).
  struct Writers {
    std::unique_ptr<Connection> c;
    std::unique_ptr<GroupCommit> group;
  };
  Writers& Writer() {
    if (Writers* w = writer_ready_.load(std::memory_order_acquire)) return *w;
    std::lock_guard lock(writer_mutex_);
    if (!writer_) {
      auto w = std::make_unique<Writers>();
      w->c = std::make_unique<Connection>(path_, sync_full_);
      Connection& c = *w->c;
      c.FitCache(CacheKib(kWriterCacheKib));
      // Replaces SQLite's checkpoint inside the COMMIT, on the thread every queued write waits for.
      c.OnCommit([this, &c](int frames) { checkpointer_.AfterCommit(c, frames); });
      // A log that grew long (passes behind, a long reader) is cut back to this when it starts
      // over, rather than keep its longest size on disk; the log of steady writes stays well under.
      c.Exec("PRAGMA journal_size_limit=67108864");
      // A write group is one transaction with a savepoint per write, and each savepoint journals
      // the pages it is first to change (the same hot pages again for every write: a table's last
      // leaf and its indexes, the outbox, the logs). Past 64 KiB SQLite moved that journal to a
      // temporary file, a write call per page: 36 per create in a burst of creates that fire a
      // trigger. In memory it lasts as long as the group's transaction and holds what the group
      // changed (a few MiB for write_queue.hpp's 128 writes). The readers keep the default.
      c.Exec("PRAGMA temp_store=MEMORY");
      c.CheckWritable();
      w->group = std::make_unique<GroupCommit>(c);
      c.Exec("CREATE TABLE IF NOT EXISTS _crmd_schema (className TEXT PRIMARY KEY NOT NULL, definition TEXT NOT NULL)");
      sqlite::CreateOutbox(c);
      CheckFormat(c, path_, kStoreFormat, "store");
      writer_ = std::move(w);
      writer_ready_.store(writer_.get(), std::memory_order_release);
    }
    return *writer_;
  }
  // Commits on the writer so far; none before it opens.
  std::uint64_t Commits() const {
    const Writers* w = writer_ready_.load(std::memory_order_acquire);
    return w ? w->group->Commits() : 0;
  }
  std::mutex writer_mutex_;
  std::unique_ptr<Writers> writer_;
  std::atomic<Writers*> writer_ready_{nullptr};
  CountCache counts_;
  std::mutex pool_mutex_;
  std::vector<std::unique_ptr<Connection>> idle_;
};

}  // namespace
}  // namespace sqlite

std::unique_ptr<Database> OpenSqlite(const std::string& path, Durability durability, int readers) {
  return std::make_unique<sqlite::SqliteDatabase>(path, durability, readers);
}

void LimitPageCache(std::int64_t bytes) { sqlite::g_cache_budget.store(bytes, std::memory_order_relaxed); }

}  // namespace crmd::storage
