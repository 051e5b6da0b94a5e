// JSON-RPC 2.0 as MCP's Streamable HTTP transport carries it (../shared/research/MCP.md §1-2): one
// message per POST, or under protocol revision 2025-03-26 a batch (an array of messages, removed
// in 2025-06-18). A request's `id` is echoed exactly as sent, a string staying a string and a
// number a number.
#pragma once

#include <boost/json.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace crmd::mcp {

// JSON-RPC error codes used by crmd.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
// Implementation-defined (the -32000..-32019 range): transport refusals and the spec's missing
// authentication (§5.6, §7).
inline constexpr int kServerError = -32000;

struct Message {
  enum class Kind { kRequest, kNotification, kResponse };
  Kind kind = Kind::kRequest;
  boost::json::value id;  // null for a notification
  std::string method;
  // Null when absent. Part of the parsed message, not a copy of it: `tree` holds it when
  // ParseMessage parsed it, the caller of ReadMessage otherwise (a tool's arguments are its
  // largest part, a record to create).
  const boost::json::value* params = nullptr;
  std::shared_ptr<const boost::json::value> tree;

  const boost::json::object* ParamsObject() const { return params ? params->if_object() : nullptr; }
};

struct Refusal {
  int code;
  std::string message;
};

// The message in `body`, or why it is none (kParseError: not JSON; kInvalidRequest: not one
// JSON-RPC 2.0 message).
std::variant<Message, Refusal> ParseMessage(std::string_view body);
// One parsed element of a batch read as a message; `parsed` must outlive it.
std::variant<Message, Refusal> ReadMessage(const boost::json::value& parsed);

// The most messages one batch may carry: a client's batch is a handful (initialize and its
// notification, a few calls); each call is a request of its own on the server.
inline constexpr std::size_t kMaxBatch = 32;
// Whether `body` is a JSON array (its first character past white space is `[`).
bool LooksLikeBatch(std::string_view body);
// The elements of a batch, unread; kInvalidRequest for an empty array, one longer than kMaxBatch,
// or a body that is not an array.
std::variant<std::vector<boost::json::value>, Refusal> ParseBatch(std::string_view body);

boost::json::object Success(const boost::json::value& id, boost::json::value result);
boost::json::object Failure(const boost::json::value& id, int code, std::string_view message);

}  // namespace crmd::mcp
