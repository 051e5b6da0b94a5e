#include "query/lookup.hpp"

#include "query/read.hpp"
#include "schema/names.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"

namespace crmd::query {

namespace json = boost::json;

namespace {

ApiError BadLookup(std::string message) { return ApiError{400, errors::kInvalidQuery, std::move(message)}; }

std::string LookupField(std::string_view name) { return name == "_id" ? "objectId" : std::string(name); }

// What `value` is compared as: a Pointer by its record's id when the other side is `objectId`.
json::value LookupKey(const json::value& value, bool by_id) {
  if (by_id && value.is_object())
    if (const auto* id = value.get_object().if_contains("objectId"); id && id->is_string()) return *id;
  return value;
}

}  // namespace

Result<Lookup> ParseLookup(const json::value& arg) {
  const auto* o = arg.if_object();
  if (!o || o->size() != 4) return BadLookup("$lookup takes from, localField, foreignField and as");
  Lookup out;
  for (const auto& [key, slot] : {std::pair<std::string_view, std::string*>{"from", &out.from},
                                  {"localField", &out.local_field},
                                  {"foreignField", &out.foreign_field},
                                  {"as", &out.as}}) {
    const auto* v = o->if_contains(key);
    if (!v || !v->is_string() || v->get_string().empty())
      return BadLookup("$lookup takes from, localField, foreignField and as");
    *slot = std::string(v->get_string());
  }
  if (!schema::IsValidUserClassName(out.from) && !schema::IsSystemClassName(out.from)) return errors::InvalidClassName(out.from);
  out.local_field = LookupField(out.local_field);
  out.foreign_field = LookupField(out.foreign_field);
  if (!schema::IsValidFieldName(out.as)) return errors::InvalidFieldName(out.as);
  return out;
}

Status ApplyLookups(auth::Context& ctx, const std::vector<Lookup>& lookups, json::array& rows) {
  for (const auto& lookup : lookups) {
    const bool by_id = lookup.foreign_field == "objectId";
    json::array keys;
    for (const auto& row : rows)
      if (const auto* v = row.is_object() ? row.get_object().if_contains(lookup.local_field) : nullptr; v && !v->is_null())
        keys.push_back(LookupKey(*v, by_id));
    json::array found;
    if (!keys.empty()) {
      ListRequest list;
      list.where = json::object{{lookup.foreign_field, json::object{{"$in", std::move(keys)}}}};
      list.limit = kMaxLookupRows + 1;
      std::string text;
      CRMD_TRY(ListRecords(ctx, lookup.from, list, text));
      auto parsed = ParseJson(text);
      if (!parsed.ok() || !parsed.value().is_object()) return errors::Internal();
      if (auto* results = parsed.value().get_object().if_contains("results"); results && results->is_array())
        found = std::move(results->get_array());
      if (found.size() > static_cast<std::size_t>(kMaxLookupRows))
        return BadLookup("A $lookup joins at most " + std::to_string(kMaxLookupRows) + " records");
    }
    for (auto& row : rows) {
      if (!row.is_object()) continue;
      json::array matches;
      const auto* local = row.get_object().if_contains(lookup.local_field);
      if (local && !local->is_null()) {
        const std::string wanted = ToJson(LookupKey(*local, by_id));
        for (const auto& record : found) {
          const auto* theirs = record.get_object().if_contains(lookup.foreign_field);
          if (theirs && ToJson(LookupKey(*theirs, by_id)) == wanted) matches.push_back(record);
        }
      }
      row.get_object()[lookup.as] = std::move(matches);
    }
  }
  return {};
}

}  // namespace crmd::query
