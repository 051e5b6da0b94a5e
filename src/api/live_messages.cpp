#include "api/live_messages.hpp"

#include <boost/json.hpp>

namespace crmd::api::live {

namespace json = boost::json;

namespace {

json::object Base(std::string_view op, std::string_view client_id, std::optional<std::int64_t> request_id) {
  json::object out{{"op", op}};
  if (!client_id.empty()) out["clientId"] = client_id;
  if (request_id) out["requestId"] = *request_id;
  return out;
}

}  // namespace

std::string Reply(std::string_view op, std::string_view client_id, std::optional<std::int64_t> request_id) {
  return json::serialize(Base(op, client_id, request_id));
}

std::string Error(int code, std::string_view message, bool reconnect, std::string_view client_id,
                  std::optional<std::int64_t> request_id) {
  json::object out = Base("error", client_id, request_id);
  out["code"] = code;
  out["error"] = message;
  out["reconnect"] = reconnect;
  return json::serialize(out);
}

std::string Event(std::string_view op, std::string_view client_id, std::int64_t request_id, const json::value& object) {
  json::object out = Base(op, client_id, request_id);
  out["object"] = object;
  return json::serialize(out);
}

}  // namespace crmd::api::live
