// The server's messages of Parse's LiveQuery protocol (docs/LIVEQUERY.md): JSON text objects with
// an `op`. Each subscription's messages carry its client and request ids.
#pragma once

#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace crmd::api::live {

// The error codes of LiveQuery's own refusals (an `error` op); a refusal by the read pipeline
// carries its Parse error code instead (119, 209, 102, ...).
inline constexpr int kMalformed = 1;       // not a JSON object, or a field of the wrong type
inline constexpr int kNotConnected = 2;    // no `connect` yet, or no such subscription
inline constexpr int kUnknownOp = 3;
inline constexpr int kBadCredentials = 4;  // unknown application, refused key

// `{"op":op,"clientId":…,"requestId":…}`; the ids only when given.
std::string Reply(std::string_view op, std::string_view client_id, std::optional<std::int64_t> request_id);
// `{"op":"error","code":…,"error":…,"reconnect":…}`, with the ids when given.
std::string Error(int code, std::string_view message, bool reconnect, std::string_view client_id,
                  std::optional<std::int64_t> request_id);
// An event (`create`, `enter`, `update`, `leave`, `delete`) about `object`.
std::string Event(std::string_view op, std::string_view client_id, std::int64_t request_id, const boost::json::value& object);

}  // namespace crmd::api::live
