#include "mcp/json_rpc.hpp"

namespace crmd::mcp {

namespace json = boost::json;

namespace {

json::value Parse(std::string_view body, json::error_code& ec) {
  json::parse_options options;
  options.max_depth = 64;  // as the record API's bodies
  return json::parse(body, ec, json::storage_ptr(), options);
}

}  // namespace

std::variant<Message, Refusal> ParseMessage(std::string_view body) {
  json::error_code ec;
  auto parsed = std::make_shared<const json::value>(Parse(body, ec));
  if (ec) return Refusal{kParseError, "Parse error"};
  auto read = ReadMessage(*parsed);
  if (auto* message = std::get_if<Message>(&read)) message->tree = std::move(parsed);
  return read;
}

std::variant<std::vector<json::value>, Refusal> ParseBatch(std::string_view body) {
  json::error_code ec;
  json::value parsed = Parse(body, ec);
  if (ec) return Refusal{kParseError, "Parse error"};
  json::array* items = parsed.if_array();
  if (!items || items->empty() || items->size() > kMaxBatch) return Refusal{kInvalidRequest, "Invalid Request"};
  return std::vector<json::value>(std::make_move_iterator(items->begin()), std::make_move_iterator(items->end()));
}

bool LooksLikeBatch(std::string_view body) {
  const auto first = body.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && body[first] == '[';
}

std::variant<Message, Refusal> ReadMessage(const json::value& parsed) {
  const json::object* object = parsed.if_object();
  const json::value* version = object ? object->if_contains("jsonrpc") : nullptr;
  if (!version || !version->is_string() || version->get_string() != "2.0") return Refusal{kInvalidRequest, "Invalid Request"};
  Message message;
  const json::value* id = object->if_contains("id");
  // An id is a string or a number (JSON-RPC 2.0; MCP forbids null).
  if (id && !id->is_string() && !id->is_number()) return Refusal{kInvalidRequest, "Invalid Request"};
  const json::value* method = object->if_contains("method");
  if (!method) {
    if (!id || (!object->contains("result") && !object->contains("error"))) return Refusal{kInvalidRequest, "Invalid Request"};
    message.kind = Message::Kind::kResponse;
    message.id = *id;
    return message;
  }
  if (!method->is_string()) return Refusal{kInvalidRequest, "Invalid Request"};
  message.kind = id ? Message::Kind::kRequest : Message::Kind::kNotification;
  if (id) message.id = *id;
  message.method = std::string(method->get_string());
  if (const json::value* params = object->if_contains("params")) {
    if (!params->is_object() && !params->is_array()) return Refusal{kInvalidRequest, "Invalid Request"};
    message.params = params;
  }
  return message;
}

json::object Success(const json::value& id, json::value result) {
  return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json::object Failure(const json::value& id, int code, std::string_view message) {
  return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"error", json::object{{"code", code}, {"message", message}}}};
}

}  // namespace crmd::mcp
