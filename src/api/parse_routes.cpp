#include "api/parse_routes.hpp"

#include "util/errors.hpp"
#include "util/json.hpp"
#include "util/strings.hpp"

namespace crmd::api {

namespace json = boost::json;

namespace {

constexpr std::string_view kConfigClass = "/classes/Config";

Response Passed(const std::pair<int, json::value>& answer) { return JsonResponse(answer.first, answer.second); }

const json::array* Results(const json::value& answer) {
  const auto* o = answer.if_object();
  const auto* results = o ? o->if_contains("results") : nullptr;
  return results ? results->if_array() : nullptr;
}

std::string WhereParam(const json::object& where) { return "where=" + PercentEncode(ToJson(where)); }

bool IsDelete(const json::value& v) {
  const auto* o = v.if_object();
  const auto* op = o ? o->if_contains("__op") : nullptr;
  return op && op->is_string() && op->get_string() == "Delete";
}

Response ReadConfig(const SendToApi& send) {
  auto answer = send("GET", std::string(kConfigClass) + "?limit=" + std::to_string(kMaxPurge) + "&order=createdAt,objectId", nullptr);
  if (answer.first != 200) return Passed(answer);
  json::object params;
  if (const auto* rows = Results(answer.second))
    for (const auto& row : *rows) {
      const auto* o = row.if_object();
      const auto* name = o ? o->if_contains("Name") : nullptr;
      const auto* value = o ? o->if_contains("Value") : nullptr;
      if (!name || !name->is_string() || !value || params.contains(name->get_string())) continue;  // the first row wins, as for flags
      const auto* flag = value->is_object() ? value->get_object().if_contains(name->get_string()) : nullptr;
      params[name->get_string()] = flag ? *flag : *value;
    }
  return JsonResponse(200, json::object{{"params", std::move(params)}});
}

Response WriteConfig(const Request& request, auth::Context& ctx, const SendToApi& send) {
  json::value storage;
  auto body = BodyObject(request, storage);
  if (!body.ok()) return ErrorResponse(body.error());
  const auto* params = body.value()->if_contains("params");
  if (!params || !params->is_object()) return ErrorResponse(errors::BadRequest("config updates need an object of params"));
  // Parse's `masterKeyOnly`: a param the keys alone may read. Its row gets an ACL that grants no
  // one, so no session reads it through this route or the record API; `false` opens it again.
  const json::object* master_only = nullptr;
  if (const auto* flags = body.value()->if_contains("masterKeyOnly"); flags && !flags->is_null()) {
    master_only = flags->if_object();
    if (!master_only) return ErrorResponse(errors::BadRequest("masterKeyOnly must be an object of booleans"));
    for (const auto& [name, flag] : *master_only)
      if (!flag.is_bool()) return ErrorResponse(errors::BadRequest("masterKeyOnly must be an object of booleans"));
  }
  for (const auto& [name, value] : params->get_object()) {
    auto found = send("GET", std::string(kConfigClass) + "?limit=1&keys=objectId&" +
                                 WhereParam(json::object{{"Name", name}}), nullptr);
    if (found.first != 200) return Passed(found);
    const auto* rows = Results(found.second);
    std::string id;
    if (rows && !rows->empty() && rows->front().is_object())
      if (const auto* v = rows->front().get_object().if_contains("objectId"); v && v->is_string()) id = std::string(v->get_string());
    std::pair<int, json::value> written;
    if (IsDelete(value)) {
      if (id.empty()) continue;
      written = send("DELETE", std::string(kConfigClass) + "/" + id, nullptr);
    } else {
      json::value row = json::object{{"Name", name}, {"Value", json::object{{name, value}}}};
      if (const auto* flag = master_only ? master_only->if_contains(name) : nullptr)
        row.get_object()["ACL"] = flag->get_bool() ? json::object{} : json::object{{"*", json::object{{"read", true}}}};
      written = id.empty() ? send("POST", std::string(kConfigClass), &row) : send("PUT", std::string(kConfigClass) + "/" + id, &row);
    }
    if (written.first >= 300) return Passed(written);
  }
  return JsonResponse(200, json::object{{"result", true}});
}

}  // namespace

Response HandleParseConfig(const Request& request, auth::Context& ctx, const SendToApi& send) {
  if (request.method == Method::kGet) return ReadConfig(send);
  return WriteConfig(request, ctx, send);
}

Response HandleParsePurge(const std::string& class_name, auth::Context& ctx, const SendToApi& send) {
  const std::string path = "/classes/" + PercentEncode(class_name);
  auto counted = send("GET", path + "?limit=0&count=1", nullptr);
  if (counted.first != 200) return Passed(counted);
  const auto* count = counted.second.is_object() ? counted.second.get_object().if_contains("count") : nullptr;
  if (count && count->is_number() && count->to_number<double>() > kMaxPurge)
    return ErrorResponse(ApiError{400, errors::kOperationForbidden,
                                  "A purge deletes at most " + std::to_string(kMaxPurge) +
                                      " records; delete this class's records in batches first."});
  for (;;) {
    auto page = send("GET", path + "?limit=500&keys=objectId", nullptr);
    if (page.first != 200) return Passed(page);
    const auto* rows = Results(page.second);
    if (!rows || rows->empty()) break;
    for (const auto& row : *rows) {
      const auto* id = row.is_object() ? row.get_object().if_contains("objectId") : nullptr;
      if (!id || !id->is_string()) continue;
      auto deleted = send("DELETE", path + "/" + PercentEncode(id->get_string()), nullptr);
      // A record another points at stays (spec §3.4): the purge stops there and says so.
      if (deleted.first >= 300) return Passed(deleted);
    }
  }
  return JsonResponse(200, json::object{});
}

Response HandleParseSessionMe(auth::Context& ctx, std::optional<std::string_view> token, const SendToApi& send) {
  if (ctx.identity.principal != auth::Principal::kUser || !token) return ErrorResponse(errors::InvalidSessionToken());
  auto session = send("GET", "/classes/_Session/" + PercentEncode(ctx.identity.session_id), nullptr);
  if (session.first != 200 || !session.second.is_object()) return Passed(session);
  session.second.get_object()["sessionToken"] = *token;
  return Passed(session);
}

}  // namespace crmd::api
