#include "api/functions.hpp"

#include "functions/forms.hpp"

namespace crmd::api {

namespace {
Response FormErrorResponse(ApiError error) {
  error.body = ErrorBody::kErrorOnly;
  return ErrorResponse(error);
}
}  // namespace

Response HandleFunction(const Request& request, std::string_view name, auth::Context& ctx) {
  boost::json::value storage;
  auto body = BodyObject(request, storage);
  if (!body.ok()) return FormErrorResponse(std::move(body).error());
  auto answer = functions::RunForm(ctx, name, *body.value());
  if (!answer) return FormErrorResponse(ApiError{400, 0, "User function not found", ErrorBody::kErrorOnly});
  if (!answer->ok()) return FormErrorResponse(std::move(*answer).error());
  return JsonResponse(200, std::move(*answer).value());
}

}  // namespace crmd::api
