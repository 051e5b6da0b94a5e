#include "api/records.hpp"

#include <algorithm>
#include <charconv>

#include "app/application.hpp"
#include "query/read.hpp"
#include "query/text_score.hpp"
#include "schema/names.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"
#include "util/log.hpp"
#include "util/strings.hpp"
#include "write/record_writer.hpp"

namespace crmd::api {

namespace json = boost::json;

namespace {

// More sort keys than any index could serve; a longer list is a mistake or an attack.
constexpr std::size_t kMaxOrderKeys = 16;

Result<std::int64_t> NonNegative(const std::string& name, const std::string& text) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0)
    return errors::InvalidQueryParameter(name);
  return v;
}

// Sort keys are field names with an optional `-`; anything else is 105, as Parse answers.
// Repeated keys are dropped and the list is bounded, so clients cannot mint endless SQL shapes.
// `parse_names` (the gate): Parse's stored names of the two dates sort as the dates.
Result<std::vector<std::pair<std::string, bool>>> ParseOrder(std::string_view text, bool parse_names) {
  std::vector<std::pair<std::string, bool>> keys;
  for (auto part : Split(text, ',')) {
    bool descending = !part.empty() && part.front() == '-';
    if (descending) part.remove_prefix(1);
    if (part.empty()) continue;
    if (parse_names && part == "_created_at") part = "createdAt";
    else if (parse_names && part == "_updated_at") part = "updatedAt";
    if (part != "objectId" && part != "createdAt" && part != "updatedAt" &&
        !schema::IsValidFieldName(part))
      return errors::InvalidFieldName(part);
    bool seen = false;
    for (const auto& k : keys) seen = seen || k.first == part;
    if (!seen) keys.emplace_back(std::string(part), descending);
    if (keys.size() > kMaxOrderKeys) return errors::InvalidQueryParameter("order");
  }
  return keys;
}

// `where` is URL-encoded JSON (spec §4.2). Malformed JSON is the spec's 500; JSON nested past the
// limit is a client error.
Result<json::value> ParseWhereParam(const std::string& text) {
  bool too_deep = false;
  auto parsed = ParseJson(text, &too_deep);
  if (parsed.ok()) return parsed;
  if (too_deep) return errors::InvalidQueryParameter("where");
  log::Warn("invalid where JSON", {{"error", parsed.error().message}});
  return errors::Internal();
}

constexpr std::string_view kListParams[] = {"where", "limit", "skip", "order", "include", "keys", "count"};
// Parse's name for "query the class this Relation field holds" (parseNames gate): the SDK sends it
// with a `$relatedTo` when it does not know the relation's class.
constexpr std::string_view kRedirectParam = "redirectClassNameForKey";

// The class a list reads: the target of the Relation `key` of `class_name`, else `class_name`
// itself, as Parse answers it.
std::string RedirectedClass(const auth::Context& ctx, const std::string& class_name, std::string_view key) {
  const auto snapshot = ctx.app->schema();
  const auto* cls = snapshot->Find(class_name);
  const auto* def = cls ? cls->FindField(key) : nullptr;
  if (def && def->type == schema::FieldType::kRelation) return def->target_class;
  return class_name;
}

// Parse's `excludeKeys` (under `--prefix parse`): a projection of every field but those named.
void Exclude(query::ListRequest& list, std::string_view excluded, const schema::ClassSchema* cls) {
  const auto names = Split(excluded, ',');
  auto kept = [&](std::string_view field) { return std::find(names.begin(), names.end(), field) == names.end(); };
  if (list.keys) {
    std::erase_if(*list.keys, [&](const std::string& key) { return !kept(key); });
    return;
  }
  if (!cls) return;
  list.keys.emplace();
  for (const auto& [field, def] : cls->fields)
    if (kept(field)) list.keys->push_back(field);
}

Result<query::ListRequest> ParseListParams(const Target& target, const auth::Context& ctx, const std::string& class_name) {
  const bool parse_routes = ctx.app->settings().prefix == "parse";
  // Names first: an unencoded `&` splits `where` into a bad name and broken JSON, and the spec
  // answers the name (400 102) rather than the JSON (500).
  for (const auto& [name, value] : target.params)
    if (std::find(std::begin(kListParams), std::end(kListParams), name) == std::end(kListParams) &&
        !(parse_routes && name == "excludeKeys") && !(name == kRedirectParam && ctx.identity.gates.parse_names))
      return errors::InvalidQueryParameter(name);
  query::ListRequest list;
  std::string excluded;
  for (const auto& [name, value] : target.params) {
    if (name == "where") {
      CRMD_ASSIGN(list.where, ParseWhereParam(value));
    } else if (name == "limit") {
      CRMD_ASSIGN(list.limit, NonNegative(name, value));
    } else if (name == "skip") {
      CRMD_ASSIGN(list.skip, NonNegative(name, value));
    } else if (name == "order") {
      CRMD_ASSIGN(list.order, ParseOrder(value, ctx.identity.gates.parse_names));
    } else if (name == "include") {
      CRMD_ASSIGN(list.include, query::ParseIncludeList(value));
    } else if (name == "keys") {
      CRMD_ASSIGN(list.keys, query::ParseKeysList(value));
    } else if (name == "count") {
      if (value != "0" && value != "1") return errors::InvalidQueryParameter(name);
      list.count = value == "1";
    } else if (name == "excludeKeys") {
      excluded = value;
    } else if (name == kRedirectParam) {
      continue;  // HandleRecords chose the class
    } else {
      return errors::InvalidQueryParameter(name);
    }
  }
  if (!excluded.empty()) Exclude(list, excluded, ctx.app->schema()->Find(class_name));
  return list;
}

// Parse's `$score` in `order` and `keys` (parseNames gate): taken out of `target`'s parameters;
// the flags say where it was (query/text_score).
struct ScoreAsked {
  bool order = false, keys = false;
};
ScoreAsked TakeScore(Target& target) {
  ScoreAsked asked;
  for (auto& [name, value] : target.params) {
    if (name != "order" && name != "keys") continue;
    std::string kept;
    for (auto part : Split(value, ',')) {
      if (part == "$score" || part == "-$score") {
        (name == "order" ? asked.order : asked.keys) = true;
        continue;
      }
      kept += (kept.empty() ? "" : ",") + std::string(part);
    }
    // `keys=$score` alone projects the score and the builtin fields.
    if (kept.empty() && name == "keys" && asked.keys) kept = "objectId";
    value = std::move(kept);
  }
  std::erase_if(target.params, [](const auto& p) { return p.first == "order" && p.second.empty(); });
  return asked;
}

Response Respond(int status, Result<json::object> result) {
  if (!result.ok()) return ErrorResponse(result.error());
  return JsonResponse(status, result.value());
}

// A redirected list's answer (redirectClassNameForKey): `className` beside `results` and in
// each result.
void NameResultClass(std::string& body, const std::string& class_name) {
  auto parsed = ParseJson(body);
  if (!parsed.ok() || !parsed.value().is_object()) return;
  json::object& answer = parsed.value().get_object();
  if (auto* results = answer.if_contains("results"); results && results->is_array())
    for (auto& r : results->get_array())
      if (r.is_object()) r.get_object()["className"] = class_name;
  json::object out{{"className", class_name}};
  for (auto& kv : answer) out[kv.key()] = std::move(kv.value());
  body.clear();
  WriteJson(out, body);
}

}  // namespace

Response HandleRecords(const Request& request, const Target& target, auth::Context& ctx) {
  const auto& segments = target.segments;
  const std::string& class_name = segments[1];
  if (!schema::IsValidUserClassName(class_name) && !schema::IsSystemClassName(class_name))
    return ErrorResponse(errors::InvalidClassName(class_name));

  if (segments.size() == 2) {
    switch (request.method) {
      case Method::kGet: {
        const bool redirect = ctx.identity.gates.parse_names &&
                              std::any_of(target.params.begin(), target.params.end(),
                                          [](const auto& p) { return p.first == kRedirectParam; });
        const std::string read_class = redirect ? RedirectedClass(ctx, class_name, target.Param(kRedirectParam)) : class_name;
        Target params = target;
        const ScoreAsked score = ctx.identity.gates.parse_names ? TakeScore(params) : ScoreAsked{};
        auto list = ParseListParams(params, ctx, read_class);
        if (!list.ok()) return ErrorResponse(list.error());
        Response response;
        auto status = score.order || score.keys
                          ? query::ListByScore(ctx, read_class, list.value(), score.order, score.keys, response.body)
                          : query::ListRecords(ctx, read_class, list.value(), response.body);
        if (!status.ok()) return ErrorResponse(status.error());
        // Parse names the class the results are of, in the answer and in each result (the SDK's
        // first() and get() read the result's).
        if (redirect) NameResultClass(response.body, read_class);
        return response;
      }
      case Method::kPost: {
        json::value storage;
        auto body = BodyObject(request, storage);
        if (!body.ok()) return ErrorResponse(body.error());
        return Respond(201, write::CreateRecord(ctx, class_name, *body.value()));
      }
      default: return ErrorResponse(errors::RouteNotFound(request.method_name, target.path));
    }
  }

  // An id that cannot exist (`..`, `a/b`, `role:Admin`) is looked up like any other and simply
  // not found, after the permission checks, so refusals do not depend on the id's shape.
  const std::string& object_id = segments[2];
  switch (request.method) {
    case Method::kGet: {
      std::vector<std::string> include;
      std::optional<std::vector<std::string>> keys;
      for (const auto& [name, value] : target.params) {
        if (name == "include") {
          auto parsed = query::ParseIncludeList(value);
          if (!parsed.ok()) return ErrorResponse(parsed.error());
          include = std::move(parsed).value();
        } else if (name == "keys") {
          auto parsed = query::ParseKeysList(value);
          if (!parsed.ok()) return ErrorResponse(parsed.error());
          keys = std::move(parsed).value();
        }
      }
      Response response;
      auto status = query::WriteRecord(ctx, class_name, object_id, include, keys, response.body);
      if (!status.ok()) return ErrorResponse(status.error());
      return response;
    }
    case Method::kPut: {
      json::value storage;
      auto body = BodyObject(request, storage);
      if (!body.ok()) return ErrorResponse(body.error());
      return Respond(200, write::UpdateRecord(ctx, class_name, object_id, *body.value()));
    }
    case Method::kDelete:
      return Respond(200, write::DeleteRecord(ctx, class_name, object_id));
    default: return ErrorResponse(errors::RouteNotFound(request.method_name, target.path));
  }
}

}  // namespace crmd::api
