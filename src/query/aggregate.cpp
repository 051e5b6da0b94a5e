#include "query/aggregate.hpp"

#include <algorithm>

#include "app/application.hpp"
#include "auth/authorize.hpp"
#include "query/aggregate_plan.hpp"
#include "query/lookup.hpp"
#include "query/read.hpp"
#include "query/visibility.hpp"
#include "query/where_parser.hpp"
#include "schema/codec.hpp"
#include "schema/names.hpp"
#include "storage/record_store.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"

namespace crmd::query {

namespace json = boost::json;

namespace {

ApiError Bad(std::string message) { return ApiError{400, errors::kInvalidQuery, std::move(message)}; }

// A field a stage may name: builtin or declared, never a secret.
Result<std::optional<schema::FieldDef>> Field(const schema::ClassSchema& cls, std::string_view name) {
  if (name == "objectId") return std::optional<schema::FieldDef>(schema::FieldDef{schema::FieldType::kString, {}});
  if (name == "createdAt" || name == "updatedAt")
    return std::optional<schema::FieldDef>(schema::FieldDef{schema::FieldType::kDate, {}});
  if (!schema::IsValidFieldName(name) || schema::IsSecretField(cls.name, name)) return errors::InvalidFieldName(name);
  const auto* def = cls.FindField(name);
  if (!def || def->type == schema::FieldType::kRelation) return std::optional<schema::FieldDef>();
  return std::optional<schema::FieldDef>(*def);
}

// "$Field" -> Field.
Result<std::string> FieldNameOf(const json::value& v) {
  if (!v.is_string() || v.get_string().size() < 2 || v.get_string()[0] != '$') return Bad("expected \"$<field>\"");
  return std::string(std::string_view(v.get_string()).substr(1));
}

Result<json::value> ParamJson(const std::string& text) {
  bool too_deep = false;
  auto parsed = ParseJson(text, &too_deep);
  if (!parsed.ok()) return Bad("Invalid aggregate parameter: " + parsed.error().message);
  return parsed;
}

struct Stages {
  std::optional<json::value> match, group, sort, project;
  std::optional<std::int64_t> skip, limit;
  std::optional<std::string> count, distinct;
  std::vector<Lookup> lookups;  // Parse's `$lookup`, last (query/lookup)
};

Status AddStage(Stages& s, std::string_view name, const json::value& arg, int& last, int rank) {
  if (name == "$lookup" && last == rank) {  // lookups follow one another at the end
    CRMD_ASSIGN(auto lookup, ParseLookup(arg));
    s.lookups.push_back(std::move(lookup));
    return {};
  }
  if (rank <= last) return Bad("Unsupported pipeline: stages must be in the order $match, $group, $sort, $skip, $limit, $project, $count");
  last = rank;
  auto number = [&](std::optional<std::int64_t>& slot) -> Status {
    if (!arg.is_int64() || arg.get_int64() < 0) return Bad(std::string(name) + " must be a non-negative integer");
    slot = arg.get_int64();
    return {};
  };
  if (name == "$match") s.match = arg;
  else if (name == "$group") s.group = arg;
  else if (name == "$sort") s.sort = arg;
  else if (name == "$skip") return number(s.skip);
  else if (name == "$limit") return number(s.limit);
  else if (name == "$project") s.project = arg;
  else if (name == "$count") {
    if (!arg.is_string() || !schema::IsValidFieldName(arg.get_string())) return Bad("$count takes a field name");
    s.count = std::string(arg.get_string());
  } else if (name == "$lookup") {
    CRMD_ASSIGN(auto lookup, ParseLookup(arg));
    s.lookups.push_back(std::move(lookup));
  } else return Bad("Unsupported pipeline stage: " + std::string(name));
  return {};
}

int Rank(std::string_view stage) {
  static constexpr std::string_view kOrder[] = {"$match", "$group", "$sort", "$skip", "$limit", "$project", "$count", "$lookup"};
  for (int i = 0; i < 8; ++i)
    if (kOrder[i] == stage) return i;
  return 99;
}

Result<Stages> ParseStages(const std::vector<std::pair<std::string, std::string>>& params, bool lookups) {
  Stages s;
  int last = -1;
  for (const auto& [name, value] : params) {
    if (name == "pipeline") {
      CRMD_ASSIGN(auto pipeline, ParamJson(value));
      if (pipeline.is_object()) pipeline = json::array{pipeline};
      if (!pipeline.is_array()) return Bad("pipeline must be an array of stages");
      for (const auto& stage : pipeline.get_array()) {
        if (!stage.is_object() || stage.get_object().size() != 1) return Bad("each pipeline stage has one key");
        const auto& kv = *stage.get_object().begin();
        // Parse's `$lookup` is a stage of the parseNames gate alone (issue 36).
        if (kv.key() == "$lookup" && !lookups) return Bad("Unsupported pipeline stage: $lookup");
        CRMD_TRY(AddStage(s, kv.key(), kv.value(), last, Rank(kv.key())));
      }
    } else if (name == "distinct") {
      s.distinct = value;
    } else if (name == "where") {
      // The filter of Parse SDK's `distinct`, beside the stages: it holds with any $match.
      CRMD_ASSIGN(auto where, ParamJson(value));
      if (!where.is_object()) return Bad("where must be an object");
      if (where.get_object().empty()) continue;
      s.match = s.match ? json::value(json::object{{"$and", json::array{*s.match, where}}}) : where;
    } else if (name == "match" || name == "group" || name == "sort" || name == "project") {
      CRMD_ASSIGN(auto arg, ParamJson(value));
      CRMD_TRY(AddStage(s, "$" + name, arg, last, Rank("$" + name)));
    } else if (name == "skip" || name == "limit") {
      CRMD_ASSIGN(auto arg, ParamJson(value));
      CRMD_TRY(AddStage(s, "$" + name, arg, last, Rank("$" + name)));
    } else if (name == "count") {
      CRMD_TRY(AddStage(s, "$count", json::value(value), last, Rank("$count")));
    } else {
      return errors::InvalidQueryParameter(name);
    }
  }
  return s;
}

Result<AggregatePlan> GroupPlan(const schema::ClassSchema& cls, const json::value& group,
                                std::optional<schema::FieldDef>& key_def,
                                std::vector<std::pair<std::string, std::optional<schema::FieldDef>>>& outputs) {
  if (!group.is_object() || !group.get_object().contains("_id")) return Bad("$group needs an _id");
  AggregatePlan plan;
  for (const auto& kv : group.get_object()) {
    if (kv.key() == "_id") {
      if (kv.value().is_null()) continue;
      CRMD_ASSIGN(auto key, FieldNameOf(kv.value()));
      CRMD_ASSIGN(key_def, Field(cls, key));
      if (!key_def) return Bad("$group _id names a field the class does not have: " + key);
      plan.key_column = key;
      continue;
    }
    if (!schema::IsValidFieldName(kv.key())) return errors::InvalidFieldName(kv.key());
    if (!kv.value().is_object() || kv.value().get_object().size() != 1) return Bad("each accumulator has one operator");
    const auto& op = *kv.value().get_object().begin();
    Accumulator acc;
    std::optional<schema::FieldDef> out_def;
    if (op.key() == "$count") {
      acc.op = AccumulatorOp::kCount;
    } else if (op.key() == "$sum" && op.value().is_number()) {
      acc.op = AccumulatorOp::kSum;
      acc.constant = op.value().to_number<double>();
    } else {
      static const std::pair<std::string_view, AccumulatorOp> kOps[] = {
          {"$sum", AccumulatorOp::kSum}, {"$avg", AccumulatorOp::kAvg}, {"$min", AccumulatorOp::kMin}, {"$max", AccumulatorOp::kMax}};
      auto it = std::find_if(std::begin(kOps), std::end(kOps), [&](const auto& p) { return p.first == op.key(); });
      if (it == std::end(kOps)) return Bad("Unsupported accumulator: " + std::string(op.key()));
      acc.op = it->second;
      CRMD_ASSIGN(acc.column, FieldNameOf(op.value()));
      CRMD_ASSIGN(auto def, Field(cls, acc.column));
      if (!def) return Bad("accumulator names a field the class does not have: " + acc.column);
      if ((acc.op == AccumulatorOp::kSum || acc.op == AccumulatorOp::kAvg) && def->type != schema::FieldType::kNumber)
        return Bad(std::string(op.key()) + " needs a Number field: " + acc.column);
      if (acc.op == AccumulatorOp::kMin || acc.op == AccumulatorOp::kMax) out_def = def;
    }
    plan.accumulators.push_back(std::move(acc));
    outputs.emplace_back(std::string(kv.key()), out_def);
  }
  return plan;
}

json::value Decode(const storage::Cell& cell, const std::optional<schema::FieldDef>& def) {
  if (storage::IsNull(cell)) return nullptr;
  if (def) return schema::DecodeCell(cell, *def);
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return *i;
  if (const auto* d = std::get_if<double>(&cell)) {
    if (*d == static_cast<double>(static_cast<std::int64_t>(*d)) && std::abs(*d) < 9e15)
      return static_cast<std::int64_t>(*d);
    return *d;
  }
  if (const auto* s = std::get_if<std::string>(&cell)) return json::value(*s);
  return nullptr;
}

// Sorts, pages and projects group results (few, so in memory).
Status Finish(json::array& rows, const Stages& s) {
  if (s.sort) {
    if (!s.sort->is_object()) return Bad("$sort must map fields to 1 or -1");
    std::vector<std::pair<std::string, bool>> keys;
    for (const auto& kv : s.sort->get_object()) {
      if (!kv.value().is_number()) return Bad("$sort must map fields to 1 or -1");
      keys.emplace_back(kv.key() == "_id" ? "objectId" : std::string(kv.key()), kv.value().to_number<double>() < 0);
    }
    auto less = [](const json::value& a, const json::value& b) {
      if (a.is_number() && b.is_number()) return a.to_number<double>() < b.to_number<double>();
      return ToJson(a) < ToJson(b);
    };
    std::stable_sort(rows.begin(), rows.end(), [&](const json::value& a, const json::value& b) {
      for (const auto& [key, desc] : keys) {
        const auto* x = a.get_object().if_contains(key);
        const auto* y = b.get_object().if_contains(key);
        const json::value nx = x ? *x : json::value(nullptr), ny = y ? *y : json::value(nullptr);
        if (less(nx, ny)) return !desc;
        if (less(ny, nx)) return desc;
      }
      return false;
    });
  }
  const auto skip = static_cast<std::size_t>(s.skip.value_or(0));
  if (skip >= rows.size()) rows.clear();
  else rows.erase(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(skip));
  if (s.limit && rows.size() > static_cast<std::size_t>(*s.limit)) rows.resize(static_cast<std::size_t>(*s.limit));
  if (s.project) {
    if (!s.project->is_object()) return Bad("$project must map fields to 1");
    for (auto& row : rows) {
      auto& o = row.get_object();
      for (auto it = o.begin(); it != o.end();) {
        const bool keep = it->key() == "objectId" || s.project->get_object().contains(it->key());
        it = keep ? std::next(it) : o.erase(it);
      }
    }
  }
  if (s.count) {
    json::array counted;
    counted.push_back(json::object{{*s.count, static_cast<std::int64_t>(rows.size())}});
    rows = std::move(counted);
  }
  return {};
}

}  // namespace

Status Aggregate(auth::Context& ctx, std::string_view class_name,
                 const std::vector<std::pair<std::string, std::string>>& params, std::string& out) {
  // Spec §4.6: an API key or the session of a permitted user; never anonymous.
  if (ctx.identity.principal == auth::Principal::kAnonymous)
    return errors::PermissionDenied("find", class_name);
  auto snapshot = ctx.app->schema();
  const auto* cls = snapshot->Find(class_name);
  CRMD_TRY(auth::Authorize(ctx.identity, auth::Operation::kFind, class_name, cls));
  CRMD_ASSIGN(auto stages, ParseStages(params, ctx.identity.gates.parse_names));
  // A group or a count tells how many rows match: the class's `count` permission too, as for
  // `count=1` on a query (a user who may find but not count learns no totals).
  if (stages.group || stages.count) CRMD_TRY(auth::Authorize(ctx.identity, auth::Operation::kCount, class_name, cls));
  if (!cls) {
    out += "{\"results\":[]}";
    return {};
  }
  if (!stages.group && !stages.distinct && !stages.count) {
    // No grouping: a find with the stages as its parameters.
    ListRequest list;
    list.where = stages.match;
    list.limit = stages.limit.value_or(-1);
    list.skip = stages.skip.value_or(0);
    if (stages.sort && stages.sort->is_object())
      for (const auto& kv : stages.sort->get_object())
        list.order.emplace_back(std::string(kv.key()), kv.value().is_number() && kv.value().to_number<double>() < 0);
    if (stages.project && stages.project->is_object()) {
      list.keys.emplace();
      for (const auto& kv : stages.project->get_object()) list.keys->emplace_back(kv.key());
      // A lookup reads the field it joins on.
      for (const auto& lookup : stages.lookups) list.keys->push_back(lookup.local_field);
    }
    if (stages.lookups.empty()) return ListRecords(ctx, class_name, list, out);
    std::string text;
    CRMD_TRY(ListRecords(ctx, class_name, list, text));
    auto parsed = ParseJson(text);
    if (!parsed.ok() || !parsed.value().is_object()) return errors::Internal();
    auto* found = parsed.value().get_object().if_contains("results");
    if (!found || !found->is_array()) return errors::Internal();
    CRMD_TRY(ApplyLookups(ctx, stages.lookups, found->get_array()));
    WriteJson(parsed.value(), out);
    return {};
  }

  AggregatePlan plan;
  std::optional<schema::FieldDef> key_def;
  std::vector<std::pair<std::string, std::optional<schema::FieldDef>>> outputs;
  if (stages.distinct) {
    CRMD_ASSIGN(key_def, Field(*cls, *stages.distinct));
    if (!key_def) {
      out += "{\"results\":[]}";
      return {};
    }
    plan.key_column = *stages.distinct;
    plan.distinct = true;
  } else if (stages.group) {
    CRMD_ASSIGN(plan, GroupPlan(*cls, *stages.group, key_def, outputs));
  } else {  // $count alone: one group of every row
    plan.accumulators.push_back({AccumulatorOp::kCount, {}, 1});
    outputs.emplace_back("count", std::nullopt);
  }
  if (stages.match) {
    CRMD_ASSIGN(plan.query.where, ParseWhere(*stages.match, *cls, *snapshot, ctx.identity));
  }
  LimitToReadable(ctx.identity, *snapshot, *cls, plan.query);

  auto rows = ctx.app->db().Aggregate(*cls, plan);
  if (rows.size() > kMaxGroups) return Bad("The aggregation produced more than " + std::to_string(kMaxGroups) + " groups");
  json::array results;
  for (const auto& row : rows) {
    if (plan.distinct) {
      results.push_back(Decode(row[0], key_def));
      continue;
    }
    json::object group{{"objectId", Decode(row[0], key_def)}};
    for (std::size_t i = 0; i < outputs.size(); ++i) group[outputs[i].first] = Decode(row[i + 1], outputs[i].second);
    results.push_back(std::move(group));
  }
  if (!plan.distinct) {
    if (!stages.group && stages.count) {
      // `$count` alone counts the matching rows.
      json::array counted;
      counted.push_back(json::object{{*stages.count, results.empty() ? json::value(0) : results[0].get_object().at("count")}});
      results = std::move(counted);
    } else {
      CRMD_TRY(Finish(results, stages));
    }
    CRMD_TRY(ApplyLookups(ctx, stages.lookups, results));
  }
  WriteJson(json::object{{"results", std::move(results)}}, out);
  return {};
}

}  // namespace crmd::query
