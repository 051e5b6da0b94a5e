#include "api/live_messages.hpp"

#include <boost/json.hpp>

namespace crmd::api::live {

namespace json = boost::json;

namespace {

json::object Base(std::string_view op, const Client& client, std::optional<std::int64_t> request_id) {
  json::object out{{"op", op}};
  if (!client.id.empty()) out["clientId"] = client.id;
  if (!client.installation_id.empty()) out["installationId"] = client.installation_id;
  if (request_id) out["requestId"] = *request_id;
  return out;
}

}  // namespace

std::string Reply(std::string_view op, const Client& client, std::optional<std::int64_t> request_id) {
  return json::serialize(Base(op, client, request_id));
}

std::string Error(int code, std::string_view message, bool reconnect, const Client& client,
                  std::optional<std::int64_t> request_id) {
  json::object out = Base("error", client, request_id);
  out["code"] = code;
  out["error"] = message;
  out["reconnect"] = reconnect;
  return json::serialize(out);
}

std::string Event(std::string_view op, const Client& client, std::int64_t request_id, const json::value& object,
                  const json::value* original) {
  json::object out = Base(op, client, request_id);
  out["object"] = object;
  if (original) out["original"] = *original;
  return json::serialize(out);
}

std::string NotEnabled(std::string_view class_name) {
  return "LiveQuery is not enabled for class " + std::string(class_name.substr(0, 128));
}

}  // namespace crmd::api::live
