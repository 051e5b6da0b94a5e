// Every error the spec names, defined once. Messages are contractual, to the letter (spec §7).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/result.hpp"

namespace crmd::errors {

// Parse error codes used by the spec.
inline constexpr int kInternal = 1;
inline constexpr int kObjectNotFound = 101;
inline constexpr int kInvalidQuery = 102;
inline constexpr int kInvalidClassName = 103;
inline constexpr int kInvalidKeyName = 105;
inline constexpr int kInvalidJson = 107;
inline constexpr int kCommandUnavailable = 108;
inline constexpr int kIncorrectType = 111;
inline constexpr int kOperationForbidden = 119;
inline constexpr int kInvalidNestedKey = 121;
inline constexpr int kInvalidAcl = 123;
inline constexpr int kDuplicateValue = 137;
inline constexpr int kInvalidSessionToken = 209;
inline constexpr int kScriptFailed = 141;

ApiError ObjectNotFound();
ApiError PermissionDenied(std::string_view operation, std::string_view class_name);
ApiError CaptchaRequired();
ApiError PointerExists(std::string_view object_id, std::string_view table, std::string_view field);
ApiError InvalidFieldName(std::string_view name);
ApiError InvalidClassName(std::string_view name);
ApiError FieldNameCaseCollision(std::string_view name, std::string_view existing);
ApiError ClassNameCaseCollision(std::string_view name, std::string_view existing);
// 429 `{"error":"Too many requests"}` without a code: the answer of the anonymous doors (forms,
// uploads) past their per-address limits, in their error form (spec §7).
ApiError TooManyRequests();
ApiError InvalidSessionToken();  // 400 209 `invalid session token`
ApiError UserNeedsAuthentication();  // 404 101 `user needs to be authenticated`
ApiError UsernameMissing();
ApiError PasswordMissing();
ApiError UsernameTaken();
ApiError EmailTaken();
ApiError PasswordPolicy();
ApiError CannotModifyUser(std::string_view id);
ApiError InvalidLogin();
ApiError AccountLocked(long minutes);
ApiError UserInactive();
ApiError InvalidObjectId(std::string_view id);
ApiError ObjectIdNotWritable();  // 105 `objectId is an invalid field name.`
ApiError DuplicateObjectId();
ApiError SchemaMismatch(std::string_view table, std::string_view field, std::string_view expected,
                        std::string_view got);
ApiError InvalidNestedKey();
ApiError InvalidAcl();
ApiError InvalidJson(std::string_view detail);
ApiError BodyNotObject();
ApiError BodyTooLarge(std::size_t limit);
ApiError HeaderTooLarge();
ApiError BadRequest(std::string_view detail);
ApiError UnsupportedOperator(std::string_view op);
ApiError InvalidOperatorArgument(std::string_view message);
ApiError InvalidQueryParameter(std::string_view name);
ApiError BadConstraint(std::string_view op);   // 107 `bad constraint: <op>` (spec §4.3)
ApiError InvalidKeyName(std::string_view key); // 105 `Invalid key name: <key>` (Parse)
ApiError FunctionNotFound();                   // 141 `function not found` (spec §4.9)
ApiError Unauthorized();               // 403 {"error":"unauthorized"}: missing or unknown app id
ApiError MasterKeyRequired();          // 403 {"error":"unauthorized: master key is required"}
ApiError SystemTableDenied();          // 400 {"error":"Action is denied for system tables"} (spec §7)
ApiError TooManyFields(std::size_t max); // 400 255 `A class may have at most <max> fields.`
ApiError TooManyKeys(std::size_t max); // 400 107 `A body may hold at most <max> keys.`
ApiError RouteNotFound(std::string_view method, std::string_view path);
ApiError Internal();                   // 500 {"code":1,"message":"Internal server error."}
ApiError Unavailable(std::string_view why);  // 503 {"code":1,"error":"Service unavailable: <why>"}
ApiError QueryTimeout(long seconds);   // 400 124 `The query took longer than <n> s; ...`
// Issue 31: the limits of the anonymous doors, in the form of the form and file routes (§7).
ApiError FileDeleteFailed();                      // 400 {"code":153,"error":"Could not delete file."} (Parse)
ApiError FileTooLarge(std::uint64_t limit);         // 413 {"error":"File too large: at most <n> bytes"}
ApiError FileQuotaExceeded(std::int64_t quota_mib); // 413 {"error":"File quota exceeded: ..."}
ApiError UploadTooSlow(std::uint64_t min_rate);     // 408 {"error":"Upload too slow: ..."}
ApiError UploadTooLong(long seconds);               // 408 {"error":"Upload took longer than <n> s"}

}  // namespace crmd::errors
