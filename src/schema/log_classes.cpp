#include "schema/log_classes.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "schema/names.hpp"
#include "util/errors.hpp"

namespace crmd::schema {

namespace json = boost::json;

namespace {

ClassSchema Make(std::string_view name, FieldType writer_type,
                 std::vector<std::pair<std::string, FieldDef>> fields) {
  ClassSchema cls;
  cls.name = std::string(name);
  const std::string writer_target = writer_type == FieldType::kPointer ? "_User" : "";
  cls.fields.emplace_back("createdBy", FieldDef{writer_type, writer_target});
  cls.fields.emplace_back("updatedBy", FieldDef{writer_type, writer_target});
  for (auto& f : fields) cls.fields.push_back(std::move(f));
  cls.class_level_permissions = ClosedPermissions();
  return cls;
}

ApiError BadTimeline(std::string message) { return ApiError{400, errors::kInvalidJson, std::move(message)}; }

}  // namespace

bool IsAppendOnlyLog(std::string_view class_name) {
  return class_name == kTimelineClass || class_name == kRequestLogClass || class_name == kTriggerLogClass;
}

ClassSchema TriggerLogClass() {
  ClassSchema cls;
  cls.name = std::string(kTriggerLogClass);
  for (const char* field : {"triggerId", "actionId", "event", "objectIdValue", "data", "error"})
    cls.fields.emplace_back(field, FieldDef{FieldType::kString, {}});
  cls.class_level_permissions = ClosedPermissions();
  cls.indexes["triggerId_1"] = json::object{{"triggerId", 1}};
  return cls;
}

ClassSchema TimelineClass() {
  ClassSchema cls = Make(kTimelineClass, FieldType::kString,
                         {{"event", {FieldType::kString, {}}},
                          {"objectClass", {FieldType::kString, {}}},
                          {"objectIdValue", {FieldType::kString, {}}},
                          {"data", {FieldType::kObject, {}}},
                          {"user", {FieldType::kString, {}}},
                          {"Referer", {FieldType::kString, {}}},
                          {"Last", {FieldType::kBoolean, {}}}});
  // Signed-in users read history (row ACLs follow their records'); keys write it (spec §5.3).
  const json::object signed_in{{"requiresAuthentication", true}};
  for (const char* op : {"find", "count", "get"}) cls.class_level_permissions[op] = signed_in;
  // A record's rows, and its `Last` row, found on every change of the record whatever the length
  // of its history; deletions by class (§2.6).
  cls.indexes["objectIdValue_1_Last_1"] = json::object{{"objectIdValue", 1}, {"Last", 1}};
  cls.indexes["objectClass_1_event_1"] = json::object{{"objectClass", 1}, {"event", 1}};
  return cls;
}

ClassSchema RequestLogClass() {
  // Readable with the master key only (spec §5.3): the class is closed, and auth/ refuses the API
  // key and sessions, which CLPs cannot tell from the master key.
  return Make(kRequestLogClass, FieldType::kPointer,
              {{"path", {FieldType::kString, {}}},
               {"method", {FieldType::kString, {}}},
               {"ip", {FieldType::kString, {}}},
               {"country", {FieldType::kString, {}}},
               {"referer", {FieldType::kString, {}}},
               {"userAgent", {FieldType::kString, {}}},
               {"user", {FieldType::kPointer, "_User"}},
               {"usingMK", {FieldType::kBoolean, {}}},
               {"internal", {FieldType::kBoolean, {}}},
               {"trustedIP", {FieldType::kBoolean, {}}},
               {"duration", {FieldType::kNumber, {}}},
               {"statusCode", {FieldType::kNumber, {}}},
               {"contentLength", {FieldType::kNumber, {}}},
               {"service", {FieldType::kString, {}}},
               {"retries", {FieldType::kNumber, {}}},
               {"installationId", {FieldType::kString, {}}}});
}

std::optional<ClassSchema> UpgradedTimelineClass(const ClassSchema& existing) {
  // Asked at every open of an application, once per class that keeps history (issue 33: a cold
  // product-base open): the wanted shape is built once, and the existing one copied only to change.
  static const ClassSchema wanted = TimelineClass();
  const bool current =
      std::all_of(wanted.fields.begin(), wanted.fields.end(), [&](const auto& field) {
        const FieldDef* have = existing.FindField(field.first);
        return have && have->type == field.second.type && have->target_class == field.second.target_class;
      }) &&
      std::all_of(wanted.indexes.begin(), wanted.indexes.end(),
                  [&](const auto& index) { return existing.indexes.contains(index.key()); });
  if (current) return std::nullopt;
  ClassSchema out = existing;
  bool changed = false;
  for (const auto& [name, def] : wanted.fields) {
    auto it = std::find_if(out.fields.begin(), out.fields.end(), [&](const auto& f) { return f.first == name; });
    if (it == out.fields.end()) {
      out.fields.emplace_back(name, def);
      changed = true;
    } else if (it->second.type != def.type || it->second.target_class != def.target_class) {
      // Same column, other meaning: a Pointer and a String both hold the text of an id.
      it->second = def;
      changed = true;
    }
  }
  for (const auto& index : wanted.indexes) {
    if (out.indexes.contains(index.key())) continue;
    out.indexes[index.key()] = index.value();
    changed = true;
  }
  if (!changed) return std::nullopt;
  return out;
}

Status CheckTimelineConfig(const json::object& timeline) {
  for (const auto& kv : timeline) {
    if (kv.key() == "displayFields") {
      if (!kv.value().is_object()) return BadTimeline("timeline.displayFields must be an object");
      for (const auto& f : kv.value().get_object())
        if (!IsValidFieldName(f.key()) && !IsBuiltinField(f.key()))
          return BadTimeline(fmt::format("timeline.displayFields: invalid field name: {}", f.key()));
    } else if (kv.key() == "index") {
      if (!kv.value().is_object()) return BadTimeline("timeline.index must be an object");
      for (const auto& column : kv.value().get_object()) {
        if (!IsValidFieldName(column.key()) || IsBuiltinField(column.key()))
          return BadTimeline(fmt::format("timeline.index: invalid column name: {}", column.key()));
        const auto& target = column.value();
        if (!target.is_string() ||
            !(IsValidUserClassName(target.get_string()) || IsSystemClassName(target.get_string())))
          return BadTimeline(fmt::format("timeline.index.{} must name a class", column.key()));
      }
    } else {
      return BadTimeline(fmt::format("{} is not a timeline key.", kv.key()));
    }
  }
  return {};
}

}  // namespace crmd::schema
