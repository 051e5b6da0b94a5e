#include "api/records.hpp"

#include <charconv>

#include "query/read.hpp"
#include "schema/names.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"
#include "util/strings.hpp"
#include "write/record_writer.hpp"

namespace crmd::api {

namespace json = boost::json;

namespace {

// More sort keys than any index could serve; a longer list is a mistake or an attack.
constexpr std::size_t kMaxOrderKeys = 16;

Result<json::object> ParseBodyObject(const Request& request) {
  CRMD_ASSIGN(auto body, ParseJson(request.body));
  if (!body.is_object()) return errors::BodyNotObject();
  return std::move(body.get_object());
}

Result<std::int64_t> NonNegative(const std::string& name, const std::string& text) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0)
    return errors::InvalidQueryParameter(name);
  return v;
}

// Sort keys are field names with an optional `-`; anything else is 105, as Parse answers.
// Repeated keys are dropped and the list is bounded, so clients cannot mint endless SQL shapes.
Result<std::vector<storage::OrderKey>> ParseOrder(std::string_view text) {
  std::vector<storage::OrderKey> keys;
  for (auto part : Split(text, ',')) {
    bool descending = !part.empty() && part.front() == '-';
    if (descending) part.remove_prefix(1);
    if (part.empty()) continue;
    if (part != "objectId" && part != "createdAt" && part != "updatedAt" &&
        !schema::IsValidFieldName(part))
      return errors::InvalidFieldName(part);
    bool seen = false;
    for (const auto& k : keys) seen = seen || k.field == part;
    if (!seen) keys.push_back({std::string(part), descending});
    if (keys.size() > kMaxOrderKeys) return errors::InvalidQueryParameter("order");
  }
  return keys;
}

Result<query::ListRequest> ParseListParams(const Target& target) {
  query::ListRequest list;
  for (const auto& [name, value] : target.params) {
    if (name == "limit") {
      CRMD_ASSIGN(list.find.limit, NonNegative(name, value));
    } else if (name == "skip") {
      CRMD_ASSIGN(list.find.skip, NonNegative(name, value));
    } else if (name == "order") {
      CRMD_ASSIGN(list.find.order, ParseOrder(value));
    } else if (name == "include") {
      CRMD_ASSIGN(list.include, query::ParseIncludeList(value));
    } else {
      return errors::InvalidQueryParameter(name);
    }
  }
  return list;
}

Response Respond(int status, Result<json::object> result) {
  if (!result.ok()) return ErrorResponse(result.error());
  return JsonResponse(status, result.value());
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
        auto list = ParseListParams(target);
        if (!list.ok()) return ErrorResponse(list.error());
        return Respond(200, query::ListRecords(ctx, class_name, list.value()));
      }
      case Method::kPost: {
        auto body = ParseBodyObject(request);
        if (!body.ok()) return ErrorResponse(body.error());
        return Respond(201, write::CreateRecord(ctx, class_name, body.value()));
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
      for (const auto& [name, value] : target.params) {
        if (name != "include") continue;
        auto parsed = query::ParseIncludeList(value);
        if (!parsed.ok()) return ErrorResponse(parsed.error());
        include = std::move(parsed).value();
      }
      return Respond(200, query::GetRecord(ctx, class_name, object_id, include));
    }
    case Method::kPut: {
      auto body = ParseBodyObject(request);
      if (!body.ok()) return ErrorResponse(body.error());
      return Respond(200, write::UpdateRecord(ctx, class_name, object_id, body.value()));
    }
    case Method::kDelete:
      return Respond(200, write::DeleteRecord(ctx, class_name, object_id));
    default: return ErrorResponse(errors::RouteNotFound(request.method_name, target.path));
  }
}

}  // namespace crmd::api
