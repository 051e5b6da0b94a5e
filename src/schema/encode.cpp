#include "schema/encode.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "schema/codec.hpp"
#include "schema/names.hpp"
#include "util/json.hpp"

namespace crmd::schema {

namespace json = boost::json;

namespace {

// Calls `visit(name, def, cell)` for each stored field a row shows, in schema order: secrets are
// skipped, and so are absent values; an explicit null comes with `cell == nullptr`.
template <typename Visit>
void ForEachShownField(const ClassSchema& cls, const Row& row, Visit&& visit) {
  // Cells follow the declared fields in order, Relations skipped: walking both in step keeps a row
  // linear in its field count.
  std::size_t i = 0;
  for (const auto& [name, def] : cls.fields) {
    if (def.type == FieldType::kRelation) continue;
    if (i >= row.cells.size()) break;
    const Cell& cell = row.cells[i++];
    if (IsSecretField(cls.name, name)) continue;
    if (IsNull(cell)) {
      if (std::find(row.nulls.begin(), row.nulls.end(), name) != row.nulls.end()) visit(name, def, nullptr);
      continue;
    }
    visit(name, def, &cell);
  }
}

}  // namespace

json::object EncodeRow(const ClassSchema& cls, const Row& row) {
  json::object out;
  out.reserve(row.cells.size() + 4);
  out["objectId"] = row.object_id;
  out["createdAt"] = row.created_at;
  out["updatedAt"] = row.updated_at;
  ForEachShownField(cls, row, [&](const std::string& name, const FieldDef& def, const Cell* cell) {
    out[name] = cell ? DecodeCell(*cell, def) : json::value(nullptr);
  });
  for (const auto& [name, def] : cls.fields)
    if (def.type == FieldType::kRelation)
      out[name] = json::object{{"__type", "Relation"}, {"className", def.target_class}};
  if (row.acl) {
    auto acl = ParseJson(*row.acl);
    if (acl.ok()) out["ACL"] = std::move(acl).value();
  }
  return out;
}

namespace {

void WriteCell(const Cell& cell, const FieldDef& def, std::string& out) {
  const auto* text = std::get_if<std::string>(&cell);
  switch (def.type) {
    case FieldType::kString:
    case FieldType::kHtml:
      if (text) return AppendJsonString(*text, out);
      break;
    case FieldType::kNumber:
      if (const auto* i = std::get_if<std::int64_t>(&cell)) {
        out += std::to_string(*i);
        return;
      }
      if (const auto* d = std::get_if<double>(&cell)) {
        out += FormatNumber(*d);
        return;
      }
      break;
    case FieldType::kBoolean:
      if (const auto* i = std::get_if<std::int64_t>(&cell)) {
        out += *i ? "true" : "false";
        return;
      }
      break;
    case FieldType::kDate:
      if (text) {
        out += "{\"__type\":\"Date\",\"iso\":";
        AppendJsonString(*text, out);
        out += "}";
        return;
      }
      break;
    case FieldType::kPointer:
      if (text) {
        out += "{\"__type\":\"Pointer\",\"className\":";
        AppendJsonString(def.target_class, out);
        out += ",\"objectId\":";
        AppendJsonString(*text, out);
        out += "}";
        return;
      }
      break;
    case FieldType::kArray:
    case FieldType::kObject:
    case FieldType::kFile:
    case FieldType::kPrivateFile:
    case FieldType::kAcl:
    case FieldType::kGeoPoint:
    case FieldType::kPolygon:
      if (text && !text->empty()) {
        out += *text;  // canonical JSON written by crmd
        return;
      }
      break;
    case FieldType::kRelation:
    case FieldType::kBytes: break;  // rare: DecodeCell wraps it
  }
  WriteJson(DecodeCell(cell, def), out);  // a cell of another SQL type: as DecodeCell shows it
}

// `,"name":`. Field names are identifiers, which need no escape: checked per byte here instead of
// through AppendJsonString's general path (a row writes thirty of them).
void AppendMemberKey(std::string_view name, std::string& out) {
  const bool plain = std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (!plain) {
    out += ',';
    AppendJsonString(name, out);
    out += ':';
    return;
  }
  // One append, then the bytes in place: inside a unity batch g++ calls each `out +=` of a literal
  // out of line (a length and a capacity check each), and a row writes thirty keys.
  const std::size_t at = out.size();
  out.append(name.size() + 4, '"');
  char* key = out.data() + at;
  key[0] = ',';
  std::memcpy(key + 2, name.data(), name.size());
  key[name.size() + 3] = ':';
}

// The members of the row's object, without the braces.
void WriteMembers(const ClassSchema& cls, const Row& row, const std::vector<std::string>* included,
                  std::vector<PointerSpan>* spans, std::string& out) {
  out += "\"objectId\":";
  AppendJsonString(row.object_id, out);
  out += ",\"createdAt\":";
  AppendJsonString(row.created_at, out);
  out += ",\"updatedAt\":";
  AppendJsonString(row.updated_at, out);
  ForEachShownField(cls, row, [&](const std::string& name, const FieldDef& def, const Cell* cell) {
    AppendMemberKey(name, out);
    if (!cell) {
      out += "null";
      return;
    }
    if (included && def.type == FieldType::kPointer) {
      const auto* id = std::get_if<std::string>(cell);
      if (id && std::find(included->begin(), included->end(), name) != included->end()) {
        const std::size_t begin = out.size();
        WriteCell(*cell, def, out);
        spans->push_back(PointerSpan{begin, out.size(), name, *id});
        return;
      }
    }
    WriteCell(*cell, def, out);
  });
  // Relations after the stored fields, as EncodeRow orders them.
  for (const auto& [name, def] : cls.fields) {
    if (def.type != FieldType::kRelation) continue;
    AppendMemberKey(name, out);
    out += "{\"__type\":\"Relation\",\"className\":";
    AppendJsonString(def.target_class, out);
    out += "}";
  }
  if (row.acl) {
    out += ",\"ACL\":";
    out += *row.acl;
  }
}

}  // namespace

void WriteRow(const ClassSchema& cls, const Row& row, std::string& out) {
  out += "{";
  WriteMembers(cls, row, nullptr, nullptr, out);
  out += "}";
}

void WriteRow(const ClassSchema& cls, const Row& row, const std::vector<std::string>& included,
              std::vector<PointerSpan>& spans, std::string& out) {
  out += "{";
  WriteMembers(cls, row, &included, &spans, out);
  out += "}";
}

void SpliceIncluded(std::string_view text, const std::vector<PointerSpan>& spans, const Expansions& expansions,
                    std::string& out) {
  std::size_t done = 0;
  for (const auto& span : spans) {
    auto field = expansions.find(std::string(span.field));
    if (field == expansions.end()) continue;
    auto record = field->second.find(span.id);
    if (record == field->second.end()) continue;  // not found or not readable: stays a Pointer
    out.append(text.substr(done, span.begin - done));
    out += record->second;
    done = span.end;
  }
  out.append(text.substr(done));
}

void WriteIncludedRow(const ClassSchema& cls, const Row& row, std::string& out) {
  out += "{\"__type\":\"Object\",\"className\":";
  AppendJsonString(cls.name, out);
  out += ",";
  WriteMembers(cls, row, nullptr, nullptr, out);
  out += "}";
}

}  // namespace crmd::schema
