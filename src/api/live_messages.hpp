// The server's messages of Parse's LiveQuery protocol (docs/LIVEQUERY.md): JSON text objects with
// an `op`. Each subscription's messages carry its client and request ids.
#pragma once

#include <boost/json/value.hpp>

#include <cstddef>
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

// A connection's clientId, over the WebSocket and the event stream alike: Parse's length.
inline constexpr std::size_t kClientIdLength = 10;

// The refusal of a class its application has not opened to LiveQuery (the name cut at 128 bytes).
std::string NotEnabled(std::string_view class_name);

// Whom a message is for: the connection's client id, and the installation id it connected with
// (the SDK hands it to the application's handlers). Either may be empty.
struct Client {
  std::string_view id;
  std::string_view installation_id;
};

// `{"op":op,"clientId":…,"installationId":…,"requestId":…}`; the ids only when given.
std::string Reply(std::string_view op, const Client& client, std::optional<std::int64_t> request_id);
// `{"op":"error","code":…,"error":…,"reconnect":…}`, with the ids when given.
std::string Error(int code, std::string_view message, bool reconnect, const Client& client,
                  std::optional<std::int64_t> request_id);
// An event (`create`, `enter`, `update`, `leave`, `delete`) about `object`, with what the record
// was before the write (`original`) when given.
std::string Event(std::string_view op, const Client& client, std::int64_t request_id, const boost::json::value& object,
                  const boost::json::value* original = nullptr);

}  // namespace crmd::api::live
