#include "api/message.hpp"

#include "util/errors.hpp"
#include "util/json.hpp"

namespace crmd::api {

std::optional<std::string_view> Request::Header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers)
    if (name == lower_name) return std::string_view(value);
  return std::nullopt;
}

Result<const boost::json::object*> BodyObject(const Request& request, boost::json::value& storage) {
  const boost::json::value* body = request.json_body.get();
  if (!body) {
    CRMD_ASSIGN(storage, ParseJson(request.body));
    body = &storage;
  }
  if (!body->is_object()) return errors::BodyNotObject();
  return &body->get_object();
}

Response JsonResponse(int status, const boost::json::value& body) {
  Response r;
  r.status = status;
  WriteJson(body, r.body);
  return r;
}

Response ErrorResponse(const ApiError& error) {
  boost::json::object body;
  switch (error.body) {
    case ErrorBody::kCodeAndError:
      body["code"] = error.code;
      body["error"] = error.message;
      break;
    case ErrorBody::kErrorOnly: body["error"] = error.message; break;
    case ErrorBody::kCodeAndMessage:
      body["code"] = error.code;
      body["message"] = error.message;
      break;
  }
  return JsonResponse(error.http_status, body);
}

void NameErrorForParse(Response& response) {
  if (response.status != 500) return;
  auto parsed = ParseJson(response.body);
  if (!parsed.ok() || !parsed.value().is_object()) return;
  boost::json::object& body = parsed.value().get_object();
  const auto* message = body.if_contains("message");
  if (!message || body.contains("error")) return;
  body["error"] = *message;
  response.body.clear();
  WriteJson(body, response.body);
}

}  // namespace crmd::api
