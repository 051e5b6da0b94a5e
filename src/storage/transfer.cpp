#include "storage/transfer.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "util/json.hpp"

namespace crmd::storage {

namespace {

namespace json = boost::json;

constexpr const char* kFormat = "crmd-export";
constexpr int kVersion = 1;
constexpr std::int64_t kPage = 500;  // rows read, and written per transaction

json::value CellJson(const Cell& cell) {
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return *i;
  if (const auto* d = std::get_if<double>(&cell)) return *d;
  if (const auto* s = std::get_if<std::string>(&cell)) return json::string(*s);
  return nullptr;
}

Cell JsonCell(const json::value& v) {
  if (v.is_int64()) return v.get_int64();
  if (v.is_uint64()) return static_cast<double>(v.get_uint64());
  if (v.is_double()) return v.get_double();
  if (v.is_string()) return std::string(v.get_string());
  return std::monostate{};
}

void Line(std::ostream& out, const char* kind, json::value value) {
  out << ToJson(json::object{{kind, std::move(value)}}) << '\n';
  if (!out) throw std::runtime_error("the export could not be written");
}

// Every row of `cls`, in objectId order, a page at a time.
template <typename Sink>
void EachRow(Database& db, const schema::ClassSchema& cls, Sink&& sink) {
  std::string after;
  for (;;) {
    schema::Query q;
    if (!after.empty()) {
      schema::Expr e = schema::FieldEquals("objectId", after);
      e.op = schema::CompareOp::kGt;
      q.where = std::move(e);
    }
    q.order = {{"objectId", false}};
    q.limit = kPage;
    std::int64_t n = 0;
    db.Find(cls, q, [&](Row& row) {
      after = row.object_id;
      ++n;
      sink(row);
      return true;
    });
    if (n < kPage) return;
  }
}

json::object RowJson(const schema::ClassSchema& cls, const Row& row) {
  json::object cells;
  const auto columns = StoredColumns(cls);
  for (std::size_t i = 0; i < columns.size() && i < row.cells.size(); ++i)
    if (!IsNull(row.cells[i])) cells[columns[i]] = CellJson(row.cells[i]);
  json::array nulls;
  for (const auto& n : row.nulls) nulls.emplace_back(n);
  return json::object{{"class", cls.name},       {"objectId", row.object_id}, {"createdAt", row.created_at},
                      {"updatedAt", row.updated_at}, {"acl", row.acl ? json::value(*row.acl) : json::value(nullptr)},
                      {"nulls", std::move(nulls)}, {"cells", std::move(cells)}};
}

Row JsonRow(const schema::ClassSchema& cls, const json::object& o) {
  Row row;
  row.object_id = std::string(o.at("objectId").as_string());
  row.created_at = std::string(o.at("createdAt").as_string());
  row.updated_at = std::string(o.at("updatedAt").as_string());
  if (o.at("acl").is_string()) row.acl = std::string(o.at("acl").as_string());
  for (const auto& n : o.at("nulls").as_array()) row.nulls.emplace_back(n.as_string());
  const auto& cells = o.at("cells").as_object();
  for (const auto& column : StoredColumns(cls)) {
    const auto* v = cells.if_contains(column);
    row.cells.push_back(v ? JsonCell(*v) : Cell(std::monostate{}));
  }
  return row;
}

}  // namespace

ExportLine ReadExportLine(std::string_view line, const char* unreadable) {
  auto parsed = ParseJson(line);
  if (!parsed.ok() || !parsed.value().is_object() || parsed.value().as_object().size() != 1) throw std::runtime_error(unreadable);
  auto& only = *parsed.value().as_object().begin();
  return ExportLine{std::string(only.key()), std::move(only.value())};
}

TransferCounts ExportStore(Database& db, const json::object& header, std::ostream& out) {
  TransferCounts counts;
  json::object first = header;
  first["format"] = kFormat;
  first["version"] = kVersion;
  out << ToJson(first) << '\n';
  const auto classes = db.LoadSchema();
  for (const auto& cls : classes) Line(out, "class", cls->ToJson());
  for (const auto& definition : classes) {
    const schema::ClassSchema& cls = *definition;
    std::int64_t& n = counts.rows[cls.name];
    EachRow(db, cls, [&](const Row& row) {
      Line(out, "row", RowJson(cls, row));
      ++n;
    });
  }
  // Relations: the members of each owner, found as a relation query finds them.
  schema::Snapshot::ClassMap map;
  for (const auto& cls : classes) map[cls->name] = cls;
  for (const auto& definition : classes) {
    const schema::ClassSchema& cls = *definition;
    for (const auto& [field, def] : cls.fields) {
      if (def.type != schema::FieldType::kRelation) continue;
      const auto target = map.find(def.target_class);
      if (target == map.end()) continue;
      EachRow(db, cls, [&](const Row& owner) {
        schema::Query q;
        schema::Expr e;
        e.kind = schema::ExprKind::kRelatedTo;
        e.owner_class = cls.name;
        e.owner_id = owner.object_id;
        e.text = field;
        q.where = std::move(e);
        q.limit = -1;
        json::array related;
        db.Find(*target->second, q, [&](Row& member) {
          related.emplace_back(member.object_id);
          return true;
        });
        if (related.empty()) return;
        counts.relations += static_cast<std::int64_t>(related.size());
        Line(out, "relation", json::object{{"class", cls.name}, {"field", field}, {"owner", owner.object_id},
                                           {"related", std::move(related)}});
      });
    }
  }
  for (std::int64_t after = 0;;) {
    const auto entries = db.ReadOutbox(after, kPage);
    for (const auto& entry : entries) {
      Line(out, "outbox", json::object{{"lane", entry.lane}, {"payload", entry.payload}});
      after = entry.id;
      ++counts.outbox;
    }
    if (entries.size() < static_cast<std::size_t>(kPage)) break;
  }
  json::object rows;
  for (const auto& [name, n] : counts.rows) rows[name] = n;
  Line(out, "end", json::object{{"rows", std::move(rows)}, {"relations", counts.relations}, {"outbox", counts.outbox}});
  out.flush();
  return counts;
}

TransferCounts ImportStore(Database& db, std::istream& in, json::object& header) {
  if (!db.LoadSchema().empty()) throw std::runtime_error("the application's store is not empty");
  std::string line;
  if (!std::getline(in, line)) throw std::runtime_error("the export is empty");
  auto first = ParseJson(line);
  if (!first.ok() || !first.value().is_object() || first.value().as_object().if_contains("format") == nullptr ||
      first.value().as_object().at("format") != kFormat)
    throw std::runtime_error("not a crmd export");
  if (first.value().as_object().at("version") != kVersion) throw std::runtime_error("an export of another version");
  header = first.value().as_object();

  TransferCounts counts;
  std::map<std::string, schema::ClassSchema> classes;
  std::unique_ptr<WriteTransaction> txn;
  std::int64_t in_txn = 0;
  auto write = [&]() -> WriteTransaction& {
    if (!txn) txn = db.BeginWrite(/*exclusive=*/true);
    return *txn;
  };
  auto maybe_commit = [&] {
    if (++in_txn < kPage) return;
    txn->Commit();
    txn.reset();
    in_txn = 0;
  };
  std::optional<json::object> end;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto [kind, body] = ReadExportLine(line, "an unreadable line in the export");
    if (kind == "class") {
      auto cls = schema::ClassSchema::FromJson(body.as_object());
      if (!cls.ok()) throw std::runtime_error("an invalid class in the export: " + cls.error().message);
      write().SaveClass(nullptr, cls.value());
      counts.rows[cls.value().name] = 0;
      classes.emplace(cls.value().name, cls.value());
      maybe_commit();
    } else if (kind == "row") {
      const auto& o = body.as_object();
      const auto found = classes.find(std::string(o.at("class").as_string()));
      if (found == classes.end()) throw std::runtime_error("a row of an undefined class in the export");
      write().Insert(found->second, StoredColumns(found->second), JsonRow(found->second, o));
      ++counts.rows[found->first];
      maybe_commit();
    } else if (kind == "relation") {
      const auto& o = body.as_object();
      const auto found = classes.find(std::string(o.at("class").as_string()));
      if (found == classes.end()) throw std::runtime_error("a relation of an undefined class in the export");
      std::vector<std::string> related;
      for (const auto& id : o.at("related").as_array()) related.emplace_back(id.as_string());
      write().ChangeRelation(found->second, o.at("field").as_string(), o.at("owner").as_string(), related, true);
      counts.relations += static_cast<std::int64_t>(related.size());
      maybe_commit();
    } else if (kind == "outbox") {
      const auto& o = body.as_object();
      write().outbox().AddOutbox(static_cast<int>(o.at("lane").to_number<std::int64_t>()), o.at("payload").as_string());
      ++counts.outbox;
      maybe_commit();
    } else if (kind == "end") {
      end = body.as_object();
      break;  // what follows (the application's files: `crmd app export`) is the caller's
    } else {
      throw std::runtime_error("an unknown line in the export: " + std::string(kind));
    }
  }
  if (!end) throw std::runtime_error("the export is cut short: it has no end line");
  if (txn) txn->Commit();
  txn.reset();
  // What the store holds now, counted by the store, against what the export says it wrote.
  for (const auto& [name, n] : end->at("rows").as_object()) {
    const auto found = classes.find(std::string(name));
    const std::int64_t want = n.to_number<std::int64_t>();
    const std::int64_t have = found == classes.end() ? -1 : db.BeginWrite(false)->Count(found->second);
    if (have != want)
      throw std::runtime_error(fmt::format("{} holds {} rows after the import, the export has {}", name, have, want));
  }
  if (counts.relations != end->at("relations").to_number<std::int64_t>() ||
      counts.outbox != end->at("outbox").to_number<std::int64_t>())
    throw std::runtime_error("the relations or activations imported do not match the export's count");
  return counts;
}

}  // namespace crmd::storage
