#include "api/schemas.hpp"

#include <fmt/format.h>

#include "app/application.hpp"
#include "schema/names.hpp"
#include "schema/system_classes.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"
#include "write/schema_writer.hpp"

namespace crmd::api {

namespace json = boost::json;

namespace {

// A class as the schema API shows it. A session's token is stored hashed in a column of crmd's
// own; Parse clients know the field as `sessionToken`, which no read ever returns.
json::object Shown(const schema::ClassSchema& cls) {
  json::object out = cls.ToJson();
  if (cls.name != "_Session") return out;
  auto& fields = out["fields"].as_object();
  fields.erase(schema::kSessionTokenHash);
  fields["sessionToken"] = json::object{{"type", "String"}};
  auto& indexes = out["indexes"].as_object();
  for (auto it = indexes.begin(); it != indexes.end();) {
    const auto* keys = it->value().if_object();
    if (keys && keys->contains(schema::kSessionTokenHash)) it = indexes.erase(it);
    else ++it;
  }
  return out;
}

}  // namespace

Response HandleSchemas(const Request& request, const Target& target, auth::Context& ctx) {
  // Spec §4.5: keys only, which the route table says (api/routes.hpp) and the router checked.
  const auto& segments = target.segments;
  auto snapshot = ctx.app->schema();

  if (segments.size() == 1) {
    if (request.method != Method::kGet)
      return ErrorResponse(errors::RouteNotFound(request.method_name, target.path));
    json::array results;
    for (const auto& [name, cls] : snapshot->classes()) results.push_back(Shown(*cls));
    return JsonResponse(200, json::object{{"results", std::move(results)}});
  }

  const std::string& class_name = segments[1];
  if (!schema::IsValidUserClassName(class_name) && !schema::IsSystemClassName(class_name))
    return ErrorResponse(errors::InvalidClassName(class_name));
  switch (request.method) {
    case Method::kGet: {
      const auto* cls = snapshot->Find(class_name);
      if (!cls)
        return ErrorResponse(
            ApiError{400, errors::kInvalidClassName, fmt::format("Class {} does not exist.", class_name)});
      return JsonResponse(200, Shown(*cls));
    }
    case Method::kPost:
    case Method::kPut: {
      json::value storage = json::object();  // an empty body stands for {}
      auto body = request.body.empty() && !request.json_body ? Result<const json::object*>(&storage.get_object())
                                                             : BodyObject(request, storage);
      if (!body.ok()) return ErrorResponse(body.error());
      auto result = request.method == Method::kPost ? write::CreateSchema(ctx, class_name, *body.value())
                                                    : write::UpdateSchema(ctx, class_name, *body.value());
      if (!result.ok()) return ErrorResponse(result.error());
      return JsonResponse(200, result.value());
    }
    case Method::kDelete: {
      auto result = write::DeleteSchema(ctx, class_name);
      if (!result.ok()) return ErrorResponse(result.error());
      return JsonResponse(200, result.value());
    }
    default: return ErrorResponse(errors::RouteNotFound(request.method_name, target.path));
  }
}

}  // namespace crmd::api
