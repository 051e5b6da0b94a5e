// Turns a request body into checked field changes against a class schema: the part of a create
// and an update that is the same. Server-owned keys are handled here too.
#pragma once

#include <boost/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/identity.hpp"
#include "schema/class_schema.hpp"
#include "storage/row.hpp"
#include "util/result.hpp"

namespace crmd::write {

// The current values of a record, for operators; empty on create.
class CurrentValues {
 public:
  CurrentValues() = default;
  CurrentValues(const schema::ClassSchema& cls, const storage::Row& row);
  // Null when the field is absent or null.
  boost::json::value Get(std::string_view field, const schema::FieldDef& def) const;

 private:
  const schema::ClassSchema* cls_ = nullptr;
  const storage::Row* row_ = nullptr;
};

// Rows to add to or remove from a Relation field's join table.
struct RelationChange {
  std::string field;
  bool add = true;
  std::vector<std::string> ids;
};

struct FieldChanges {
  std::vector<std::string> columns;  // aligned with cells
  std::vector<storage::Cell> cells;
  std::vector<std::string> set_null;  // columns given an explicit null; every other column now
                                      // holds a value or was deleted
  std::optional<std::optional<std::string>> acl;  // outer: ACL sent; inner: nullopt = removed
  std::optional<std::string> object_id;           // a master-supplied objectId (create only)
  boost::json::object echoed;                     // operator results for the update response
  std::vector<RelationChange> relations;
  bool schema_changed = false;

  // A column that now holds `cell`, or was deleted (an empty cell).
  void Set(std::string&& column, storage::Cell cell) {
    columns.push_back(std::move(column));
    cells.push_back(std::move(cell));
  }
  void Set(const char* column, storage::Cell cell) {
    columns.emplace_back(column);
    cells.push_back(std::move(cell));
  }
  // A column given an explicit null, which reads back as null rather than absent.
  void SetNull(std::string column) {
    set_null.push_back(column);
    columns.push_back(std::move(column));
    cells.emplace_back(std::monostate{});
  }
};

enum class WriteKind { kCreate, kUpdate };

// Keys one body may hold: the fields a class may have and the keys handled besides them. A larger
// body is refused before any of it is looked at.
inline constexpr std::size_t kMaxBodyKeys = schema::kMaxFieldsPerClass + 16;

// Checks `body` against `base`. The first field the body introduces makes `grown` (emptied first) a
// copy of `base`, and that field and any later new ones are added to it (schema_changed); fields
// after it are checked against `grown`. Most writes add no field, and copy no schema. On an error,
// `grown` is to be thrown away. `may_add_fields` is the caller's addField decision: its error is
// answered at the first new field, before the rest of the body costs anything.
Result<FieldChanges> CollectChanges(const boost::json::object& body, const schema::ClassSchema& base,
                                    std::optional<schema::ClassSchema>& grown, const auth::Identity& identity,
                                    WriteKind kind, std::string_view object_id, const CurrentValues& current,
                                    const Status& may_add_fields = {});

}  // namespace crmd::write
