#include "api/functions.hpp"

#include <fmt/format.h>

#include "app/write_unit.hpp"
#include "functions/config_flags.hpp"
#include "functions/forms.hpp"
#include "util/log.hpp"

namespace crmd::api {

namespace {
Response FormErrorResponse(ApiError error) {
  error.body = ErrorBody::kErrorOnly;
  return ErrorResponse(error);
}

}  // namespace

Result<boost::json::value> RunDeployed(const FunctionCall& call, const boost::json::object& body,
                                       const boost::json::value* record, auth::Context& ctx) {
  ctx.identity = auth::Identity::System();
  ctx.referer = fmt::format("server-side-code:{}", call.name);
  const std::string app_id = ctx.app->id();
  const std::string name(call.name);
  functions::LuaHost host;
  host.dispatch = [&](std::string_view method, const std::string& target, const boost::json::value* item) {
    auth::Context item_ctx = ctx;  // joins the function's unit
    return call.dispatch(item_ctx, method, target, item);
  };
  host.config_flag = [&](std::string_view flag) { return functions::ConfigFlag(*ctx.app, flag); };
  host.log = [&](std::string_view message) {
    log::Info("function", {{"app", app_id}, {"function", name}, {"message", message}});
  };
  return app::RunWrite(ctx, [&](app::WriteUnit&) {
    return functions::RunLua(call.name, *call.code, body, record, call.limits, host);
  });
}

Response HandleFunction(const Request& request, const FunctionCall& call, auth::Context& ctx) {
  boost::json::value storage;
  auto body = BodyObject(request, storage);
  if (!body.ok()) return FormErrorResponse(std::move(body).error());
  if (auto answer = functions::RunForm(ctx, call.name, *body.value())) {
    if (!answer->ok()) return FormErrorResponse(std::move(*answer).error());
    return JsonResponse(200, std::move(*answer).value());
  }
  if (!call.code) return FormErrorResponse(ApiError{400, 0, "User function not found", ErrorBody::kErrorOnly});
  auto answer = RunDeployed(call, *body.value(), nullptr, ctx);
  if (!answer.ok()) return FormErrorResponse(std::move(answer).error());
  return JsonResponse(200, std::move(answer).value());
}

Response ListFunctions(const auth::AppCredentials& credentials) {
  boost::json::array results;
  // Spec §4.9's forms are every application's; a deployed function of the same name never runs.
  for (std::string_view form : {"getlead", "web2case", "web2sale", "web2table"})
    results.push_back(boost::json::object{{"name", form}, {"kind", "form"}});
  for (const auto& [name, code] : credentials.functions)
    if (!functions::IsForm(name))
      results.push_back(boost::json::object{{"name", name}, {"kind", "lua"}, {"bytes", static_cast<std::int64_t>(code->size())}});
  return JsonResponse(200, boost::json::object{{"results", std::move(results)}});
}

}  // namespace crmd::api
