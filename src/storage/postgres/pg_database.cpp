// The PostgreSQL store of one application: its schema in the server's database (pg_stores.cpp),
// read and written through the server-wide pool (pool.hpp).
//
// Writes of one application take turns, as on SQLite: a mutex in this process and a transaction
// advisory lock on the schema across processes, so a uniqueness check (a Find inside the write)
// holds against every server on the database. A write group is one transaction, each of its
// writes a savepoint; its COMMIT is the group's durable point. `synchronous_commit` is on: a
// commit that returned is on the server's disk.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <map>
#include <mutex>
#include <set>

#include "metrics/metrics.hpp"
#include "storage/database.hpp"
#include "storage/count_cache.hpp"
#include "storage/group_transaction.hpp"
#include "storage/postgres/commit_resolution.hpp"
#include "storage/postgres/generations.hpp"
#include "storage/postgres/pg_class_tables.hpp"
#include "storage/postgres/pg_dialect.hpp"
#include "storage/postgres/pg_outbox_takeover.hpp"
#include "storage/postgres/pg_store.hpp"
#include "storage/postgres/pool.hpp"
#include "storage/sql/aggregate_statements.hpp"
#include "storage/sql/class_statements.hpp"
#include "storage/sql/outbox_statements.hpp"
#include "storage/sql/record_statements.hpp"
#include "storage/sql/relation_statements.hpp"
#include "storage/sql/where_compiler.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"
#include "util/log.hpp"
#include "util/phone.hpp"

namespace crmd::storage::postgres {

namespace {

using schema::FieldType;

// The type each column of an aggregate's rows (sql::AggregateRows) is read as: the key's, then
// numbers, but for the least and greatest of a text or a date.
std::vector<std::optional<FieldType>> ResultTypes(const schema::ClassSchema& cls, const schema::AggregatePlan& plan) {
  std::vector<std::optional<FieldType>> types{sql::ColumnType(cls, plan.key_column)};
  if (plan.distinct) return types;
  for (const auto& acc : plan.accumulators) {
    const auto type = sql::ColumnType(cls, acc.column);
    const bool extreme = acc.op == schema::AccumulatorOp::kMin || acc.op == schema::AccumulatorOp::kMax;
    const bool numeric = type == FieldType::kNumber || type == FieldType::kBoolean;
    types.push_back(extreme && !numeric ? type : std::optional(FieldType::kNumber));
  }
  return types;
}

// A timestamptz as PostgreSQL prints it in UTC (`2026-11-26 19:04:45.1+00`) in crmd's canonical
// form (`2026-11-26T19:04:45.100Z`): milliseconds, as every stored date has.
std::string IsoFromTimestamp(std::string_view text) {
  if (text.size() < 19) return std::string(text);
  std::string out(text.substr(0, 19));
  out[10] = 'T';
  std::string millis = "000";
  if (text.size() > 20 && text[19] == '.')
    for (std::size_t i = 20, j = 0; i < text.size() && j < 3 && text[i] >= '0' && text[i] <= '9'; ++i, ++j) millis[j] = text[i];
  return out + "." + millis + "Z";
}

// A number as SQLite's NUMERIC column keeps it: integral values as integers.
Cell NumberCell(std::string_view text) {
  std::int64_t i = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
  if (ec == std::errc() && end == text.data() + text.size()) return i;
  double d = 0;
  auto [dend, dec] = std::from_chars(text.data(), text.data() + text.size(), d);
  if (dec != std::errc()) {
    if (text == "NaN") return std::nan("");
    if (text == "Infinity") return HUGE_VAL;
    if (text == "-Infinity") return -HUGE_VAL;
    return std::string(text);
  }
  if (std::trunc(d) == d && std::fabs(d) < 9.2e18) return static_cast<std::int64_t>(d);
  return d;
}

Cell ReadCell(const Rows& rows, int r, int column, std::optional<FieldType> type) {
  const auto value = rows.Value(r, column);
  if (!value) return std::monostate{};
  if (type == FieldType::kNumber) return NumberCell(*value);
  if (type == FieldType::kBoolean) return std::int64_t{*value == "t" || *value == "1"};
  if (type == FieldType::kDate) return IsoFromTimestamp(*value);
  return std::string(*value);
}

// `SELECT t0.*` of the class's table, the statement's text naming the class's fields and the
// store's layout generation: a prepared statement returns the row type it was prepared with, so
// each layout of the table has its own (a statement of another server's older layout is prepared
// again by Connection::Query).
std::string SelectAll(const PgDialect& d, const schema::ClassSchema& cls, std::uint64_t layout) {
  std::string fields;
  for (const auto& [name, def] : cls.fields)
    if (def.type != FieldType::kRelation) fields += name + ",";
  return sql::SelectRows(d, cls.name, fmt::format("{:x}.{}", std::hash<std::string>{}(fields), layout));
}

// Reads the rows of `SELECT t0.*` by column name: a table a field ahead of the schema the read
// took (a write unit adding it commits) or behind it (the field is read as absent) reads right,
// and crmd's hidden columns are left out.
class RowReader {
 public:
  RowReader(const Rows& rows, const schema::ClassSchema& cls) : rows_(rows) {
    std::map<std::string_view, std::pair<int, FieldType>, std::less<>> cells;
    int i = 0;
    for (const auto& [name, def] : cls.fields)
      if (def.type != FieldType::kRelation) cells.emplace(name, std::pair(i++, def.type));
    cell_count_ = static_cast<std::size_t>(i);
    for (int c = 0; c < rows.columns(); ++c) {
      const auto name = rows.Name(c);
      if (name == "objectId") id_ = c;
      else if (name == "createdAt") created_ = c;
      else if (name == "updatedAt") updated_ = c;
      else if (name == "_acl") acl_ = c;
      else if (name == "_nulls") nulls_ = c;
      else if (auto found = cells.find(name); found != cells.end()) columns_.push_back({c, found->second.first, found->second.second});
    }
  }

  Row Read(int r) const {
    Row row;
    row.object_id = std::string(rows_.Value(r, id_).value_or(""));
    row.created_at = IsoFromTimestamp(rows_.Value(r, created_).value_or(""));
    row.updated_at = IsoFromTimestamp(rows_.Value(r, updated_).value_or(""));
    if (auto acl = rows_.Value(r, acl_)) row.acl = std::string(*acl);
    if (auto nulls = rows_.Value(r, nulls_); nulls && nulls->size() > 2) {
      // `{a,b}`: field names need no quoting in an array's text.
      const std::string_view list = nulls->substr(1, nulls->size() - 2);
      std::size_t start = 0;
      while (start <= list.size()) {
        auto end = list.find(',', start);
        if (end == std::string_view::npos) end = list.size();
        if (end > start) row.nulls.emplace_back(list.substr(start, end - start));
        start = end + 1;
      }
    }
    row.cells.assign(cell_count_, std::monostate{});
    for (const auto& column : columns_) row.cells[column.cell] = ReadCell(rows_, r, column.column, column.type);
    return row;
  }

 private:
  struct Column {
    int column;
    int cell;
    FieldType type;
  };
  const Rows& rows_;
  std::size_t cell_count_ = 0;
  int id_ = 0, created_ = 0, updated_ = 0, acl_ = 0, nulls_ = 0;
  std::vector<Column> columns_;
};

std::optional<std::string> CellParam(const Cell& cell) {
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&cell)) {
    if (std::isnan(*d)) return "NaN";
    if (std::isinf(*d)) return *d > 0 ? "Infinity" : "-Infinity";
    return fmt::format("{}", *d);
  }
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  return std::nullopt;
}

Params ToParams(const std::vector<Cell>& cells) {
  Params out;
  out.reserve(cells.size());
  for (const auto& c : cells) out.push_back(CellParam(c));
  return out;
}

// A 63-bit key of the schema for pg_advisory_xact_lock: the writes of one application, across
// every server on the database, take turns.
std::int64_t LockKey(const std::string& schema) {
  const std::string hex = ids::HashSecret(schema).substr(0, 15);
  std::int64_t key = 0;
  std::from_chars(hex.data(), hex.data() + hex.size(), key, 16);
  return key;
}

// What the store's reads and writes share.
struct Shared {
  Shared(std::shared_ptr<Pool> p, std::shared_ptr<PgOutboxTakeover> t, std::string app, std::string s)
      : app_id(std::move(app)), pool_owner(std::move(p)), pool(*pool_owner), takeover(std::move(t)), dialect(QuoteName(s)),
        raw_schema(std::move(s)), lock_key(LockKey(raw_schema)) {}
  std::string app_id;
  std::shared_ptr<Pool> pool_owner;
  Pool& pool;
  std::shared_ptr<PgOutboxTakeover> takeover;
  PgDialect dialect;
  std::string raw_schema;
  std::int64_t lock_key;
  std::mutex write_mutex;              // this process's writers of the application take turns
  std::mutex gate;                     // held by an exclusive writer waiting for its turn
  // Moves whenever this process changes a table's columns (SelectAll).
  std::atomic<std::uint64_t> layout{0};
  std::atomic<int> exclusive_waiting{0};
  // `_crmd_generation` exists (generations.hpp): writes move it without making it first, and
  // counts are cached.
  std::atomic<bool> generations_ready{false};
  CountCache counts;
  std::mutex phone_mutex;
  bool phone_loaded = false;
  std::map<std::string, std::set<std::string>, std::less<>> phone_fields;  // class -> fields with a key column
};

// The fields of `cls` with a phone-key column (loaded once per store, then kept in step by
// EnsurePhoneKeyIndex).
std::set<std::string> PhoneFields(Shared& s, Connection& c, const std::string& cls) {
  std::lock_guard lock(s.phone_mutex);
  if (!s.phone_loaded) {
    auto rows = c.Query(
        "SELECT table_name, substr(column_name, 8) FROM information_schema.columns "
        "WHERE table_schema = $1 AND column_name LIKE '\\_phone:%'",
        {s.raw_schema});
    for (int r = 0; r < rows.size(); ++r)
      s.phone_fields[std::string(*rows.Value(r, 0))].insert(std::string(*rows.Value(r, 1)));
    s.phone_loaded = true;
  }
  auto found = s.phone_fields.find(cls);
  return found == s.phone_fields.end() ? std::set<std::string>() : found->second;
}

std::optional<std::string> PhoneKeyParam(const Cell& cell) {
  const auto* text = std::get_if<std::string>(&cell);
  if (!text) return std::nullopt;
  return phone::Key(*text);
}

// The SQL of a Find: its where's parameters, its order's, then LIMIT and OFFSET.
std::string FindSql(const Shared& s, const schema::ClassSchema& cls, const schema::Query& query, sql::SqlFragment& where) {
  const PgDialect& d = s.dialect;
  where = sql::CompileWhere(d, query, cls);
  const std::string order = sql::CompileOrder(d, query, where.params);
  return sql::FindPage(d, SelectAll(d, cls, s.layout.load()), where, order);
}

void RunFind(Connection& c, const Shared& s, const schema::ClassSchema& cls, const schema::Query& query,
             const RowSink& sink) {
  sql::SqlFragment where;
  const std::string sql = FindSql(s, cls, query, where);
  Params params = ToParams(where.params);
  params.push_back(query.limit < 0 ? std::nullopt : std::optional<std::string>(std::to_string(query.limit)));
  params.push_back(std::to_string(query.skip));
  auto rows = c.Query(sql, params);
  const RowReader reader(rows, cls);
  for (int r = 0; r < rows.size(); ++r) {
    Row row = reader.Read(r);
    if (!sink(row)) break;
  }
}

std::optional<Row> GetRow(Connection& c, const Shared& s, const schema::ClassSchema& cls, std::string_view id) {
  auto rows = c.Query(sql::GetById(s.dialect, SelectAll(s.dialect, cls, s.layout.load())), {std::string(id)});
  if (rows.size() == 0) return std::nullopt;
  return RowReader(rows, cls).Read(0);
}

class PgWrite final : public WriteTransaction, public OutboxWrites {
 public:
  // Alone: its own connection and transaction, holding the application's turn until it ends.
  PgWrite(Shared& s, std::unique_lock<std::mutex> lock, bool exclusive)
      : s_(s), lock_(std::move(lock)), lease_(s.pool.Acquire(/*read=*/false)), c_(*lease_), exclusive_(exclusive) {
    // One round trip (the key is a number of this process's making). The transaction's id names it
    // should the connection drop during its COMMIT (commit_resolution.hpp).
    auto rows = c_.Exec("BEGIN; SELECT txid_current(), pg_postmaster_start_time()::text FROM pg_advisory_xact_lock(" +
                        std::to_string(s_.lock_key) + ")");
    name_ = {rows.Integer(0, 0), std::string(rows.Value(0, 1).value_or(""))};
    if (!s_.generations_ready.load()) c_.Defer(CreateGenerations(s_.dialect));
  }
  // A write of a write group: a savepoint of the group's transaction. The savepoint of the write
  // before it, committed, is released with it (`release_pending`), or by the group's COMMIT; both
  // travel with the write's first statement (Connection::Defer): a write costs its statements.
  PgWrite(Shared& s, Connection& group_connection, bool& release_pending, std::set<std::string>& touched)
      : s_(s), c_(group_connection), in_group_(true), release_pending_(&release_pending), touched_(&touched) {
    if (release_pending) c_.Defer("RELEASE SAVEPOINT item");
    c_.Defer("SAVEPOINT item");
    release_pending = false;
  }

  ~PgWrite() override {
    if (committed_) return;
    try {
      c_.Exec(in_group_ ? "ROLLBACK TO SAVEPOINT item; RELEASE SAVEPOINT item" : "ROLLBACK");
    } catch (const StorageError& e) {
      // A broken connection: the server rolled back; the pool drops it.
      log::Warn("postgresql rollback failed", {{"schema", s_.raw_schema}, {"error", e.what()}});
    }
  }

  bool Exclusive() const override { return exclusive_; }
  bool Announce(std::string_view payload) override {
    if (payload.size() > kMaxAnnouncement) return true;  // the caller keeps under it; never a failed write
    c_.Query("SELECT pg_notify('" + std::string(kRecordsChannel) + "', $1)", {std::string(payload)});
    return true;
  }
  Connection& connection() { return c_; }
  std::set<std::string>& touched() { return own_touched_; }
  // This write changed a table's columns (see SelectAll); every server on the database hears of
  // it when it commits (Stores::Watch).
  void ChangedLayout() {
    s_.layout.fetch_add(1);
    if (!changed_layout_) c_.Query("SELECT pg_notify('" + std::string(kSchemaChannel) + "', $1)", {s_.app_id});
    changed_layout_ = true;
  }

  void SaveClass(const schema::ClassSchema* before, const schema::ClassSchema& after) override {
    touched_->insert(after.name);
    if (before) AlterClassTables(c_, s_.dialect, *before, after);
    else CreateClassTables(c_, s_.dialect, after);
    ChangedLayout();
    c_.Query(sql::SaveClass(s_.dialect), {after.name, ToJson(after.ToJson())});
  }

  void Insert(const schema::ClassSchema& cls, const std::vector<std::string>& columns, const Row& row) override {
    touched_->insert(cls.name);
    const auto phones = PhoneFields(s_, c_, cls.name);
    Params params{row.object_id, row.created_at};
    AppendOwn(s_.dialect, row, params);
    for (std::size_t i = 0; i < columns.size(); ++i) params.push_back(CellParam(row.cells[i]));
    // The fields, then their phone keys; copied only when some field has a key column.
    std::vector<std::string> with_keys;
    for (std::size_t i = 0; i < columns.size(); ++i)
      if (phones.contains(columns[i])) {
        if (with_keys.empty()) with_keys = columns;
        with_keys.push_back(PhoneKeyName(columns[i]));
        params.push_back(PhoneKeyParam(row.cells[i]));
      }
    // A repeated id fails alone, without aborting the transaction around it.
    auto rows = c_.Query(
        sql::InsertRow(s_.dialect, cls.name, with_keys.empty() ? columns : with_keys, sql::OnDuplicateId::kSkip),
        params);
    if (rows.size() == 0) throw DuplicateKeyError("postgresql: " + cls.name + " has a row " + row.object_id);
  }

  // Rows in statements of 128, 32, 8, 2 and 1 rows: a handful of statement shapes per class, prepared
  // once each, and a round trip per 128 rows. A class with phone keys goes row by row.
  std::vector<std::size_t> InsertMany(const schema::ClassSchema& cls, const std::vector<std::string>& columns,
                                      const std::vector<Row>& rows) override {
    if (!PhoneFields(s_, c_, cls.name).empty()) return WriteTransaction::InsertMany(cls, columns, rows);
    touched_->insert(cls.name);
    std::vector<std::size_t> repeated;
    std::size_t at = 0;
    for (const std::size_t chunk : {128, 32, 8, 2, 1}) {
      while (rows.size() - at >= chunk) {
        Params params;
        params.reserve(chunk * (columns.size() + 7));
        for (std::size_t i = at; i < at + chunk; ++i) {
          params.push_back(rows[i].object_id);
          params.push_back(rows[i].created_at);
          AppendOwn(s_.dialect, rows[i], params);
          for (std::size_t k = 0; k < columns.size(); ++k) params.push_back(CellParam(rows[i].cells[k]));
        }
        auto inserted = c_.Query(sql::InsertRows(s_.dialect, cls.name, columns, chunk), params);
        std::set<std::string_view> done;
        for (int r = 0; r < inserted.size(); ++r) done.insert(*inserted.Value(r, 0));
        for (std::size_t i = at; i < at + chunk; ++i)
          if (!done.contains(rows[i].object_id)) repeated.push_back(i);
        at += chunk;
      }
    }
    return repeated;
  }

  void Update(const schema::ClassSchema& cls, const std::vector<std::string>& columns, const Row& row) override {
    touched_->insert(cls.name);
    const auto phones = PhoneFields(s_, c_, cls.name);
    Params params;
    AppendOwn(s_.dialect, row, params);
    // Each field's phone key right after it.
    std::vector<std::string> set;
    set.reserve(columns.size());
    for (std::size_t i = 0; i < columns.size(); ++i) {
      set.push_back(columns[i]);
      params.push_back(CellParam(row.cells[i]));
      if (phones.contains(columns[i])) {
        set.push_back(PhoneKeyName(columns[i]));
        params.push_back(PhoneKeyParam(row.cells[i]));
      }
    }
    params.push_back(row.object_id);
    c_.Query(sql::UpdateRow(s_.dialect, cls.name, set), params);
  }

  void DropClass(const schema::ClassSchema& cls) override {
    touched_->insert(cls.name);
    DropClassTables(c_, s_.dialect, cls);
    ChangedLayout();
    c_.Query(sql::DropClass(s_.dialect), {cls.name});
    std::lock_guard lock(s_.phone_mutex);
    s_.phone_fields.erase(cls.name);
  }

  std::int64_t Count(const schema::ClassSchema& cls) override {
    auto rows = c_.Query(sql::CountRows(s_.dialect, cls.name));
    return rows.Integer(0, 0);
  }

  void ChangeRelation(const schema::ClassSchema& cls, std::string_view field, std::string_view owning_id,
                      const std::vector<std::string>& related_ids, bool add) override {
    touched_->insert(cls.name);
    const std::string table = s_.dialect.JoinTable(field, cls.name);
    const std::string sql = add ? "INSERT INTO " + table +
                                      " (\"owningId\", \"relatedId\") SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING"
                                : "DELETE FROM " + table + " WHERE \"owningId\" = $1 AND \"relatedId\" = ANY($2::text[])";
    c_.Query(sql, {std::string(owning_id), ArrayLiteral(related_ids)});
  }

  bool Delete(const schema::ClassSchema& cls, std::string_view object_id) override {
    touched_->insert(cls.name);
    for (const auto& [field, def] : cls.fields)
      if (def.type == FieldType::kRelation)
        c_.Query(sql::UnlinkOwner(s_.dialect, cls.name, field), {std::string(object_id)});
    return c_.Query(sql::DeleteRow(s_.dialect, cls.name), {std::string(object_id)}).Affected() > 0;
  }

  std::int64_t UpdateWhere(const schema::ClassSchema& cls, const schema::Expr& where,
                           const std::vector<std::string>& columns, const std::vector<Cell>& cells) override {
    touched_->insert(cls.name);
    const auto update = sql::UpdateWhere(s_.dialect, cls, where, columns, cells);
    return c_.Query(update.sql, ToParams(update.params)).Affected();
  }

  std::int64_t SetAclWhere(const schema::ClassSchema& cls, const schema::Expr& where,
                           const std::optional<std::string>& acl) override {
    touched_->insert(cls.name);
    const auto update = sql::SetAclWhere(s_.dialect, cls, where, acl);
    return c_.Query(update.sql, ToParams(update.params)).Affected();
  }

  std::optional<Row> Get(const schema::ClassSchema& cls, std::string_view object_id) override {
    return GetRow(c_, s_, cls, object_id);
  }

  std::optional<Row> GetFields(const schema::ClassSchema& cls, std::string_view object_id,
                               const std::vector<std::string_view>&) override {
    return GetRow(c_, s_, cls, object_id);
  }

  bool Exists(const schema::ClassSchema& cls, std::string_view object_id) override {
    return c_.Query(sql::RowExists(s_.dialect, cls.name), {std::string(object_id)}).size() > 0;
  }

  void Find(const schema::ClassSchema& cls, const schema::Query& query, const RowSink& sink) override {
    RunFind(c_, s_, cls, query, sink);
  }

  std::vector<Row> FindByPhoneKey(const schema::ClassSchema& cls, std::string_view field, std::string_view key,
                                  std::size_t limit) override {
    std::vector<Row> out;
    const std::string table = s_.dialect.Table(cls.name), column = QuoteName(field);
    const bool keyed = PhoneFields(s_, c_, cls.name).contains(std::string(field));
    // Without its key column (never asked for an index) every set value is read and keyed here.
    auto rows = keyed ? c_.Query(fmt::format("SELECT \"objectId\", {}, {} FROM {} WHERE {} = $1 LIMIT $2",
                                             IsoText("\"createdAt\""), column, table, PhoneKeyColumn(field)),
                                 {std::string(key), std::to_string(limit)})
                      : c_.Query(fmt::format("SELECT \"objectId\", {}, {} FROM {} WHERE {} IS NOT NULL",
                                             IsoText("\"createdAt\""), column, table, column));
    for (int r = 0; r < rows.size() && out.size() < limit; ++r) {
      const std::string value(rows.Value(r, 2).value_or(""));
      if (!keyed && phone::Key(value) != std::optional<std::string>(std::string(key))) continue;
      Row row;
      row.object_id = std::string(*rows.Value(r, 0));
      row.created_at = std::string(*rows.Value(r, 1));
      row.cells.emplace_back(value);
      out.push_back(std::move(row));
    }
    return out;
  }

  std::optional<Reference> FindReference(const schema::Snapshot& classes, std::string_view target_class,
                                         std::string_view object_id,
                                         const std::vector<std::string_view>& ignored) override {
    for (const auto& [name, cls] : classes.classes()) {
      if (std::find(ignored.begin(), ignored.end(), name) != ignored.end()) continue;
      for (const auto& [field, def] : cls->fields) {
        if (def.type != FieldType::kPointer || def.target_class != target_class) continue;
        auto rows = c_.Query(sql::FindReference(s_.dialect, name, field), {std::string(object_id)});
        if (rows.size() > 0) return Reference{name, field};
      }
    }
    return std::nullopt;
  }

  OutboxWrites& outbox() override { return *this; }
  std::int64_t AddOutbox(int lane, std::string_view payload) override {
    // Claimed by this process from birth, so that another server takes it over only once this
    // one is dead; registered first (committed on its own), so that the others can find it then.
    s_.takeover->Register(s_.app_id);
    auto rows = c_.Query(AddClaimedOutbox(s_.dialect.schema()), {std::to_string(lane), std::string(payload), s_.pool.process(),
                                                                 std::to_string(s_.takeover->lease().count())});
    return rows.Integer(0, 0);
  }
  std::optional<OutboxEntry> GetOutbox(std::int64_t id) override {
    auto rows = c_.Query(sql::GetOutbox(s_.dialect), {std::to_string(id)});
    if (rows.size() == 0) return std::nullopt;
    return OutboxEntry{id, static_cast<int>(rows.Integer(0, 1)),
                       std::string(*rows.Value(0, 2))};
  }
  void SetOutbox(std::int64_t id, std::string_view payload) override {
    c_.Query(sql::SetOutbox(s_.dialect), {std::string(payload), std::to_string(id)});
  }
  void RemoveOutbox(std::int64_t id) override {
    c_.Query(sql::RemoveOutbox(s_.dialect), {std::to_string(id)});
  }

  void OpenSavepoint() override {
    c_.Exec("SAVEPOINT nested");
    ++savepoints_;
  }
  void ReleaseSavepoint() override {
    if (savepoints_ == 0) throw StorageError("postgresql: no savepoint to release");
    --savepoints_;
    c_.Exec("RELEASE SAVEPOINT nested");
  }
  void RollbackSavepoint() override {
    if (savepoints_ == 0) throw StorageError("postgresql: no savepoint to roll back");
    --savepoints_;
    c_.Exec("ROLLBACK TO SAVEPOINT nested; RELEASE SAVEPOINT nested");
  }

  // Alone, or the group's transaction at its flush: on a lost connection, what became of the COMMIT
  // is asked of the server (Committed) before anyone is answered. Throws StoreUnavailable when it
  // did not happen, CommitOutcomeUnknown when that cannot be learned.
  void Commit() override {
    if (savepoints_ != 0) throw StorageError("postgresql: commit with a savepoint still open");
    if (in_group_) {
      *release_pending_ = true;
    } else {
      // Known not to commit: the server rolls back a failed transaction at COMMIT, and a connection
      // already broken never sent it.
      if (c_.InFailedTransaction()) throw StorageError("postgresql: the transaction failed and was rolled back");
      if (!c_.Healthy()) throw StoreUnavailable("postgresql: the connection broke before COMMIT");
      // In the COMMIT's round trip: the classes' generations move with their rows.
      if (!own_touched_.empty()) c_.Defer(MoveGenerations(s_.dialect, own_touched_));
      try {
        const auto started = std::chrono::steady_clock::now();
        c_.Exec("COMMIT");
        metrics::ObserveCommit("single", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      } catch (const StoreUnavailable& e) {
        log::Warn("postgresql: the connection dropped during COMMIT, asking what became of it",
                  {{"schema", s_.raw_schema}, {"xid", name_.xid}, {"error", e.what()}});
        if (!Committed(s_.pool, name_)) throw;
      }
    }
    committed_ = true;
    if (!in_group_) s_.generations_ready.store(true);
    // Statements prepared on other connections while the change was not committed yet had the old
    // row type under the new generation.
    if (changed_layout_) s_.layout.fetch_add(1);
  }

 private:
  // updatedAt, _acl, _rperm, _wperm, _nulls (sql::InsertRow, sql::UpdateRow).
  static void AppendOwn(const PgDialect& d, const Row& row, Params& params) {
    params.push_back(row.updated_at);
    params.push_back(row.acl);
    params.push_back(CellParam(sql::Permissions(d, row.acl, "read")));
    params.push_back(CellParam(sql::Permissions(d, row.acl, "write")));
    params.push_back(CellParam(sql::Nulls(d, row.nulls)));
  }

  Shared& s_;
  std::unique_lock<std::mutex> lock_;
  Pool::Lease lease_{nullptr, Pool::Return{nullptr}};
  Connection& c_;
  bool in_group_ = false;
  bool* release_pending_ = nullptr;  // a group write's: its group's flag
  TransactionName name_;             // alone: the transaction's id and its server's start
  std::set<std::string> own_touched_;  // alone: the classes its transaction (with its group's writes) changed
  std::set<std::string>* touched_ = &own_touched_;
  bool exclusive_ = false;
  bool committed_ = false;
  bool changed_layout_ = false;
  int savepoints_ = 0;
};

class PgDatabase final : public Database {
 public:
  PgDatabase(std::shared_ptr<Pool> pool, std::shared_ptr<PgOutboxTakeover> takeover, std::string app_id, std::string schema)
      : s_(std::move(pool), std::move(takeover), std::move(app_id), std::move(schema)) {}

  std::vector<ClassDefinition> LoadSchema() override {
    auto c = s_.pool.Acquire(false);
    auto rows = c->Query(sql::LoadClasses(s_.dialect));
    std::vector<ClassDefinition> out;
    for (int r = 0; r < rows.size(); ++r) out.push_back(ReadClassDefinition(*rows.Value(r, 0), s_.raw_schema));
    return out;
  }

  std::unique_ptr<WriteTransaction> BeginWrite(bool exclusive) override {
    return std::make_unique<PgWrite>(s_, Turn(exclusive), exclusive);
  }

  std::optional<Row> Get(const schema::ClassSchema& cls, std::string_view object_id) override {
    auto c = s_.pool.Acquire();
    return GetRow(*c, s_, cls, object_id);
  }

  RowSet GetMany(const schema::ClassSchema& cls, const std::vector<std::string>& ids) override {
    RowSet out{StoredColumns(cls), {}};
    if (ids.empty()) return out;
    auto c = s_.pool.Acquire();
    const auto many = sql::GetMany(s_.dialect, SelectAll(s_.dialect, cls, s_.layout.load()), ids);
    auto rows = c->Query(many.sql, ToParams(many.params));
    const RowReader reader(rows, cls);
    for (int r = 0; r < rows.size(); ++r) out.rows.push_back(reader.Read(r));
    return out;
  }

  void Find(const schema::ClassSchema& cls, const schema::Query& query, const RowSink& sink) override {
    auto c = s_.pool.Acquire();
    RunFind(*c, s_, cls, query, sink);
  }

  // Cached under the class's generation (generations.hpp) when the where reads no other table
  // (a sub-query, a relation's join table), whose writes move other generations.
  std::int64_t Count(const schema::ClassSchema& cls, const schema::Query& query) override {
    const auto where = sql::CompileWhere(s_.dialect, query, cls);
    const std::string count_sql = sql::CountWhere(s_.dialect, cls.name, where.sql);
    auto c = s_.pool.Acquire();
    if (where.sql.find(s_.dialect.schema()) != std::string::npos || !GenerationsReady(*c)) {
      auto rows = c->Query(count_sql, ToParams(where.params));
      return rows.Integer(0, 0);
    }
    std::string key = CountCache::Key(count_sql, where.params);
    auto generation = c->Query(ReadGeneration(s_.dialect), {cls.name});
    if (auto hit = s_.counts.Find(key, generation.size() ? static_cast<std::uint64_t>(generation.Integer(0, 0)) : 0)) return *hit;
    Params params = ToParams(where.params);
    params.push_back(cls.name);
    auto rows = c->Query(CountWithGeneration(s_.dialect, cls.name, where.sql, params.size()), params);
    const std::int64_t count = rows.Integer(0, 1);
    s_.counts.Store(std::move(key), static_cast<std::uint64_t>(rows.Integer(0, 0)), count);
    return count;
  }

  std::vector<std::vector<Cell>> Aggregate(const schema::ClassSchema& cls, const schema::AggregatePlan& plan) override {
    const auto aggregate = sql::AggregateRows(s_.dialect, cls, plan);
    const auto types = ResultTypes(cls, plan);
    auto c = s_.pool.Acquire();
    auto rows = c->Query(aggregate.sql, ToParams(aggregate.params));
    std::vector<std::vector<Cell>> out;
    for (int r = 0; r < rows.size(); ++r) {
      std::vector<Cell> row;
      for (int i = 0; i < rows.columns(); ++i) {
        auto type = types[static_cast<std::size_t>(i)];
        if (i == 0 && type == FieldType::kBoolean) type = FieldType::kNumber;
        row.push_back(ReadCell(rows, r, i, type));
      }
      out.push_back(std::move(row));
    }
    return out;
  }

  FindPlan ExplainFind(const schema::ClassSchema& cls, const schema::Query& query) override {
    sql::SqlFragment where;
    const std::string sql = "EXPLAIN " + FindSql(s_, cls, query, where);
    Params params = ToParams(where.params);
    params.push_back(std::to_string(query.limit));
    params.push_back(std::to_string(query.skip));
    auto c = s_.pool.Acquire();
    auto rows = c->Query(sql, params);
    FindPlan plan;
    for (int r = 0; r < rows.size(); ++r) {
      const std::string line(*rows.Value(r, 0));
      plan.text += line + "\n";
      if (line.find("Seq Scan on") != std::string::npos) plan.full_scan = true;
      if (line.find("Sort  (") != std::string::npos) ++plan.sorts;
      if (line.find("Index Only Scan") != std::string::npos) plan.covering = true;
      for (const std::string marker : {"Index Scan using ", "Index Only Scan using ", "Bitmap Index Scan on "}) {
        const auto at = line.find(marker);
        if (at == std::string::npos) continue;
        std::string name = line.substr(at + marker.size());
        name = name.substr(0, name.find(' '));
        if (name.size() > 1 && name.front() == '"') name = name.substr(1, name.size() - 2);
        for (const std::string& prefix : {"uidx:" + cls.name + ":", "idx:" + cls.name + ":"})
          if (name.starts_with(prefix)) {
            name = name.substr(prefix.size());
            break;
          }
        plan.indexes.push_back(name);
      }
    }
    return plan;
  }

  std::vector<std::string> RelationOwners(const schema::ClassSchema& cls, std::string_view field,
                                          const std::vector<std::string>& related_ids) override {
    std::vector<std::string> owners;
    if (related_ids.empty()) return owners;
    auto c = s_.pool.Acquire();
    const auto owners_of = sql::RelationOwners(s_.dialect, cls.name, field, related_ids);
    auto rows = c->Query(owners_of.sql, ToParams(owners_of.params));
    for (int r = 0; r < rows.size(); ++r) owners.emplace_back(*rows.Value(r, 0));
    return owners;
  }

  bool EnsurePhoneKeyIndex(const schema::ClassSchema& cls, std::string_view field) override {
    {
      auto c = s_.pool.Acquire(false);
      if (PhoneFields(s_, *c, cls.name).contains(std::string(field))) return false;
    }
    PgWrite write(s_, Turn(true), true);
    write.touched().insert(cls.name);
    auto& c = write.connection();
    const std::string table = s_.dialect.Table(cls.name), column = QuoteName(field);
    c.Exec(fmt::format("ALTER TABLE {} ADD COLUMN IF NOT EXISTS {} text", table, PhoneKeyColumn(field)));
    write.ChangedLayout();
    auto rows = c.Query(fmt::format("SELECT \"objectId\", {} FROM {} WHERE {} IS NOT NULL AND {} IS NULL", column, table,
                                    column, PhoneKeyColumn(field)));
    for (int r = 0; r < rows.size(); ++r)
      c.Query(fmt::format("UPDATE {} SET {} = $2 WHERE \"objectId\" = $1", table, PhoneKeyColumn(field)),
              {std::string(*rows.Value(r, 0)), phone::Key(*rows.Value(r, 1))});
    c.Exec(fmt::format("CREATE INDEX IF NOT EXISTS {} ON {} ({}) WHERE {} IS NOT NULL", PhoneKeyIndex(cls.name, field),
                       table, PhoneKeyColumn(field), PhoneKeyColumn(field)));
    write.Commit();
    std::lock_guard lock(s_.phone_mutex);
    s_.phone_fields[cls.name].insert(std::string(field));
    return true;
  }

  std::vector<OutboxEntry> ReadOutbox(std::int64_t after, std::size_t limit) override {
    auto c = s_.pool.Acquire(false);
    auto rows = c->Query(sql::ReadOutbox(s_.dialect), {std::to_string(after), std::to_string(limit)});
    std::vector<OutboxEntry> out;
    for (int r = 0; r < rows.size(); ++r)
      out.push_back({rows.Integer(r, 0),
                     static_cast<int>(rows.Integer(r, 1)), std::string(*rows.Value(r, 2))});
    return out;
  }

  std::vector<OutboxEntry> ReadClaimable(std::int64_t after, std::size_t limit) override {
    auto c = s_.pool.Acquire(false);
    auto rows = c->Query(postgres::ReadClaimable(s_.dialect.schema()),
                         {std::to_string(after), std::to_string(limit), s_.pool.process(), s_.takeover->Live()});
    std::vector<OutboxEntry> out;
    for (int r = 0; r < rows.size(); ++r)
      out.push_back({rows.Integer(r, 0),
                     static_cast<int>(rows.Integer(r, 1)), std::string(*rows.Value(r, 2))});
    return out;
  }

  Claim ClaimOutbox(std::int64_t id, std::chrono::seconds lease) override {
    s_.takeover->Register(s_.app_id);  // before the claim: a holder of a claim can be found
    auto c = s_.pool.Acquire(false);
    auto rows = c->Query(postgres::ClaimOutbox(s_.dialect.schema()),
                         {std::to_string(id), s_.pool.process(), std::to_string(lease.count()), s_.takeover->Live()});
    if (rows.Value(0, 0) != std::optional<std::string_view>("0")) return Claim::kTaken;
    return rows.Value(0, 1) == std::optional<std::string_view>("0") ? Claim::kGone : Claim::kHeld;
  }

  void ForgetLayout() override {
    s_.layout.fetch_add(1);
    std::lock_guard lock(s_.phone_mutex);
    s_.phone_loaded = false;
    s_.phone_fields.clear();
  }

  bool CheckIntegrity() override {
    auto c = s_.pool.Acquire(false);
    return c->Query("SELECT 1").size() == 1;
  }

 private:
  // Whether `_crmd_generation` exists, asked until it does (the next write makes it).
  bool GenerationsReady(Connection& c) {
    if (s_.generations_ready.load()) return true;
    auto rows = c.Query(kGenerationsExist, {GenerationsTable(s_.dialect)});
    if (rows.Value(0, 0) == std::optional<std::string_view>("t")) s_.generations_ready.store(true);
    return s_.generations_ready.load();
  }

  // This process's turn at the application's writes; an exclusive writer is counted while it
  // waits (WriteGroup::ExclusiveWaiting).
  // An exclusive writer holds the gate while it waits, so that writers coming after it (the next
  // group of a write queue) pass the gate only once it has had its turn: std::mutex is not fair.
  std::unique_lock<std::mutex> Turn(bool exclusive) {
    if (!exclusive) {
      { std::lock_guard gate(s_.gate); }
      return std::unique_lock(s_.write_mutex);
    }
    std::lock_guard gate(s_.gate);
    s_.exclusive_waiting.fetch_add(1);
    std::unique_lock lock(s_.write_mutex);
    s_.exclusive_waiting.fetch_sub(1);
    return lock;
  }

  // The store's half of a write group: one transaction from its first write to its commit, each
  // write a savepoint of it.
  class Group final : public GroupTransaction {
   public:
    explicit Group(PgDatabase* db) : db_(db) {}
    ~Group() override { Commit(); }

    std::unique_ptr<WriteTransaction> BeginWrite(bool exclusive) override {
      if (exclusive) return db_->BeginWrite(true);
      if (!open_) {
        open_ = std::make_unique<PgWrite>(db_->s_, db_->Turn(false), false);
        release_pending_ = false;
      }
      return std::make_unique<PgWrite>(db_->s_, open_->connection(), release_pending_, open_->touched());
    }
    // Rolled back by an error, or by the server going away.
    bool Lost() const override {
      return open_ && (open_->connection().InFailedTransaction() || !open_->connection().Healthy());
    }
    bool ExclusiveWaiting() const override { return db_->s_.exclusive_waiting.load() > 0; }
    CommitOutcome Commit() override {
      if (!open_) return CommitOutcome::kDurable;
      auto outcome = CommitOutcome::kDurable;
      try {
        open_->Commit();
      } catch (const CommitOutcomeUnknown& e) {
        outcome = CommitOutcome::kUnknown;
        log::Error("write group commit failed", {{"schema", db_->s_.raw_schema}, {"error", e.what()}});
      } catch (const StoreUnavailable& e) {
        outcome = CommitOutcome::kUnavailable;
        log::Warn("write group not committed: the database is unavailable", {{"schema", db_->s_.raw_schema}, {"error", e.what()}});
      } catch (const std::exception& e) {
        outcome = CommitOutcome::kFailed;
        log::Error("write group commit failed", {{"schema", db_->s_.raw_schema}, {"error", e.what()}});
      }
      open_.reset();
      return outcome;
    }

   private:
    PgDatabase* db_;
    std::unique_ptr<PgWrite> open_;
    bool release_pending_ = false;  // the last write's savepoint, committed, still to release
  };
  std::unique_ptr<GroupTransaction> BeginGroupTransaction() override { return std::make_unique<Group>(this); }

  Shared s_;
};

}  // namespace

std::unique_ptr<Database> OpenPostgres(std::shared_ptr<Pool> pool, std::shared_ptr<PgOutboxTakeover> takeover,
                                       const std::string& app_id, const std::string& schema) {
  return std::make_unique<PgDatabase>(std::move(pool), std::move(takeover), app_id, schema);
}

}  // namespace crmd::storage::postgres
