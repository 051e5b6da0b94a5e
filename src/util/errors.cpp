#include "util/errors.hpp"

#include <fmt/format.h>

namespace crmd::errors {

namespace {
ApiError Make(int status, int code, std::string message) {
  return ApiError{status, code, std::move(message), ErrorBody::kCodeAndError};
}
}  // namespace

ApiError ObjectNotFound() { return Make(404, kObjectNotFound, "Object not found."); }

ApiError PermissionDenied(std::string_view operation, std::string_view class_name) {
  return Make(400, kOperationForbidden,
              fmt::format("Permission denied for action {} on class {}.", operation, class_name));
}

ApiError CaptchaRequired() {
  return Make(400, kOperationForbidden, "This action is not allowed without a valid CAPTCHA");
}

ApiError PointerExists(std::string_view object_id, std::string_view table, std::string_view field) {
  return Make(400, kOperationForbidden,
              fmt::format("Pointer to Object {} exists in table {} in key {}. Delete is not allowed.",
                          object_id, table, field));
}

ApiError InvalidFieldName(std::string_view name) {
  return Make(400, kInvalidKeyName, fmt::format("Invalid field name: {}.", name));
}

ApiError InvalidClassName(std::string_view name) {
  return Make(400, kInvalidClassName,
              fmt::format("Invalid classname: {}, classnames can only have alphanumeric characters and "
                          "_, and must start with an alpha character ",
                          name));
}

ApiError FieldNameCaseCollision(std::string_view name, std::string_view existing) {
  return Make(400, kInvalidKeyName,
              fmt::format("Invalid field name: {}. It differs only in case from the field {}.", name,
                          existing));
}

ApiError ClassNameCaseCollision(std::string_view name, std::string_view existing) {
  return Make(400, kInvalidClassName,
              fmt::format("Invalid classname: {}. It differs only in case from the class {}.", name,
                          existing));
}

ApiError UserNeedsAuthentication() {
  return Make(404, kObjectNotFound, "user needs to be authenticated");
}

ApiError UsernameMissing() { return Make(400, 200, "bad or missing username"); }
ApiError PasswordMissing() { return Make(400, 201, "password is required"); }
ApiError UsernameTaken() { return Make(400, 202, "Account already exists for this username."); }
ApiError EmailTaken() { return Make(400, 203, "Account already exists for this email address."); }
ApiError PasswordPolicy() {
  return Make(400, 142, "Password does not meet the Password Policy requirements.");
}
ApiError CannotModifyUser(std::string_view id) {
  return Make(400, 206, fmt::format("Cannot modify user {}.", id));
}
ApiError InvalidLogin() { return Make(404, kObjectNotFound, "Invalid username/password."); }
ApiError AccountLocked(long minutes) {
  return Make(404, kObjectNotFound,
              fmt::format("Your account is locked due to multiple failed login attempts. Please try "
                          "again after {} minute(s)",
                          minutes));
}
ApiError UserInactive() { return Make(404, kObjectNotFound, "User is not active."); }

ApiError InvalidSessionToken() { return Make(400, kInvalidSessionToken, "invalid session token"); }

ApiError InvalidObjectId(std::string_view id) {
  return Make(400, kInvalidKeyName, fmt::format("Invalid objectId: {}.", id));
}

ApiError ObjectIdNotWritable() {
  return Make(400, kInvalidKeyName, "objectId is an invalid field name.");
}

ApiError DuplicateObjectId() {
  return Make(400, kDuplicateValue, "A duplicate value for a field with unique values was provided");
}

ApiError SchemaMismatch(std::string_view table, std::string_view field, std::string_view expected,
                        std::string_view got) {
  return Make(400, kIncorrectType,
              fmt::format("schema mismatch for {}.{}; expected {} but got {}", table, field, expected,
                          got));
}

ApiError InvalidNestedKey() {
  return Make(400, kInvalidNestedKey, "Nested keys should not contain the '$' or '.' characters");
}

ApiError InvalidAcl() { return Make(400, kInvalidAcl, "Invalid ACL."); }

ApiError InvalidJson(std::string_view detail) {
  return Make(400, kInvalidJson, fmt::format("Invalid JSON: {}", detail));
}

ApiError BodyNotObject() { return Make(400, kInvalidJson, "Request body must be a JSON object."); }

ApiError BodyTooLarge(std::size_t limit) {
  return Make(413, kInvalidJson, fmt::format("Request body is larger than {} bytes.", limit));
}

ApiError HeaderTooLarge() { return Make(431, kInvalidJson, "Request header fields are too large."); }

ApiError BadRequest(std::string_view detail) { return Make(400, kInvalidJson, std::string(detail)); }

ApiError UnsupportedOperator(std::string_view op) {
  return Make(400, kCommandUnavailable, fmt::format("The {} operator is not supported yet.", op));
}

ApiError InvalidOperatorArgument(std::string_view message) {
  return Make(400, kInvalidJson, std::string(message));
}

ApiError InvalidQueryParameter(std::string_view name) {
  return Make(400, kInvalidQuery, fmt::format("Invalid parameter for query: {}", name));
}

ApiError BadConstraint(std::string_view op) {
  return Make(400, kInvalidJson, fmt::format("bad constraint: {}", op));
}

ApiError InvalidKeyName(std::string_view key) {
  return Make(400, kInvalidKeyName, fmt::format("Invalid key name: {}", key));
}

ApiError FunctionNotFound() { return Make(400, kScriptFailed, "function not found"); }

ApiError Unauthorized() { return ApiError{403, 0, "unauthorized", ErrorBody::kErrorOnly}; }

ApiError TooManyRequests() { return ApiError{429, 0, "Too many requests", ErrorBody::kErrorOnly}; }

ApiError QueryTimeout(long seconds) {
  return ApiError{400, 124,
                  fmt::format("The query took longer than {} s; narrow it with where, keys or limit.", seconds)};
}

ApiError Unavailable(std::string_view why) {
  return ApiError{503, kInternal, fmt::format("Service unavailable: {}", why)};
}

ApiError TooManyFields(std::size_t max) {
  return ApiError{400, 255, fmt::format("A class may have at most {} fields.", max)};
}

ApiError TooManyKeys(std::size_t max) { return ApiError{400, kInvalidJson, fmt::format("A body may hold at most {} keys.", max)}; }

ApiError SystemTableDenied() {
  return ApiError{400, 0, "Action is denied for system tables", ErrorBody::kErrorOnly};
}

ApiError MasterKeyRequired() {
  return ApiError{403, 0, "unauthorized: master key is required", ErrorBody::kErrorOnly};
}

ApiError RouteNotFound(std::string_view method, std::string_view path) {
  return ApiError{404, 0, fmt::format("Cannot {} {}", method, path), ErrorBody::kErrorOnly};
}

ApiError FileDeleteFailed() { return ApiError{400, 153, "Could not delete file.", ErrorBody::kCodeAndError}; }

ApiError FileTooLarge(std::uint64_t limit) {
  return ApiError{413, 0, fmt::format("File too large: at most {} bytes", limit), ErrorBody::kErrorOnly};
}

ApiError FileQuotaExceeded(std::int64_t quota_mib) {
  return ApiError{413, 0, fmt::format("File quota exceeded: the application keeps at most {} MiB of files", quota_mib),
                  ErrorBody::kErrorOnly};
}

ApiError UploadTooSlow(std::uint64_t min_rate) {
  return ApiError{408, 0, fmt::format("Upload too slow: less than {} bytes a second", min_rate), ErrorBody::kErrorOnly};
}

ApiError UploadTooLong(long seconds) {
  return ApiError{408, 0, fmt::format("Upload took longer than {} s", seconds), ErrorBody::kErrorOnly};
}

ApiError Internal() {
  return ApiError{500, kInternal, "Internal server error.", ErrorBody::kCodeAndMessage};
}


}  // namespace crmd::errors
