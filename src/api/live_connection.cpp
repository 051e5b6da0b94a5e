#include "api/live_connection.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <initializer_list>

#include "api/live_messages.hpp"
#include "api/router.hpp"
#include "util/errors.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"

namespace crmd::api {

namespace json = boost::json;

namespace {

// An installation id is told back in every message: a longer one is cut, not echoed whole.
constexpr std::size_t kMaxInstallationId = 128;

const json::string* StringField(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? &v->get_string() : nullptr;
}

// A list of field names as the SDK sends `keys`/`watch` (an array of strings), or nullopt.
std::optional<std::vector<std::string>> Names(const json::value* v) {
  std::vector<std::string> out;
  if (!v || v->is_null()) return out;
  if (!v->is_array()) return std::nullopt;
  for (const auto& name : v->get_array()) {
    if (!name.is_string()) return std::nullopt;
    out.emplace_back(name.get_string());
  }
  return out;
}

}  // namespace

LiveConnection::LiveConnection(Router& router, LiveHub& hub, std::shared_ptr<SocketPeer> peer)
    : router_(router), hub_(hub), peer_(std::move(peer)), header_prefix_(router.header_prefix()) {
  for (auto& c : header_prefix_) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

void LiveConnection::Fail(int code, std::string_view message, std::optional<std::int64_t> request_id) {
  peer_->Send(live::Error(code, message, false, Client(), request_id));
}

void LiveConnection::OnMessage(std::string_view text) {
  auto parsed = ParseJson(text);
  if (!parsed.ok() || !parsed.value().is_object()) return Fail(live::kMalformed, "A message must be a JSON object");
  const json::object& message = parsed.value().get_object();
  const json::string* op = StringField(message, "op");
  if (!op) return Fail(live::kMalformed, "A message needs an op");
  if (*op == "connect") return Connect(message);
  if (*op != "subscribe" && *op != "update" && *op != "unsubscribe") return Fail(live::kUnknownOp, "Unknown op: " + std::string(op->subview(0, 64)));
  if (client_id_.empty()) return Fail(live::kNotConnected, "Send connect before " + std::string(*op));
  if (*op == "unsubscribe") return Unsubscribe(message);
  return Subscribe(message, *op == "update");
}

void LiveConnection::Connect(const json::object& message) {
  if (!client_id_.empty()) return Fail(live::kMalformed, "Already connected");
  const json::string* app_id = StringField(message, "applicationId");
  if (!app_id) return Fail(live::kBadCredentials, "connect needs an applicationId");
  // The credentials as the REST API takes them, so the router resolves them as it would a
  // request's: the master key, crmd's API key, a session token.
  const std::string& lower = header_prefix_;
  std::vector<std::pair<std::string, std::string>> headers{{lower + "application-id", std::string(*app_id)}};
  static constexpr std::pair<std::string_view, std::string_view> kCredentials[] = {
      {"masterKey", "master-key"}, {"apiKey", "api-key"}, {"sessionToken", "session-token"}, {"installationId", "installation-id"}};
  for (const auto& [field, header] : kCredentials)
    if (const json::string* value = StringField(message, field); value && !value->empty())
      headers.emplace_back(lower + std::string(header), std::string(*value));
  Request head;
  head.headers = headers;
  if (auto checked = router_.CheckCredentials(head); !checked.ok()) {
    const ApiError& e = checked.error();
    return Fail(e.code == 0 ? live::kBadCredentials : e.code, e.code == 0 ? "Key in request is not valid" : e.message);
  }
  app_id_ = std::string(*app_id);
  headers_ = std::move(headers);
  if (const json::string* installation = StringField(message, "installationId"))
    installation_id_ = std::string(installation->subview(0, kMaxInstallationId));
  client_id_ = ids::RandomAlnum(live::kClientIdLength);
  peer_->Send(live::Reply("connected", Client(), std::nullopt));
}

void LiveConnection::Subscribe(const json::object& message, bool update) {
  const auto* rid = message.if_contains("requestId");
  if (!rid || !rid->is_int64()) return Fail(live::kMalformed, "subscribe needs a numeric requestId");
  const std::int64_t request_id = rid->get_int64();
  const auto* query_value = message.if_contains("query");
  if (!query_value || !query_value->is_object()) return Fail(live::kMalformed, "subscribe needs a query object", request_id);
  const json::object& query = query_value->get_object();
  // Parse's server checks a subscribe against its message schema: a property it does not know
  // is refused with reconnect, and the SDK then reconnects without its optional fields and
  // subscribes again (its `resubscribe`).
  const auto known = [](const json::object& o, std::initializer_list<std::string_view> names) {
    return std::all_of(o.begin(), o.end(), [&](const auto& kv) {
      return std::find(names.begin(), names.end(), std::string_view(kv.key())) != names.end();
    });
  };
  if (!known(message, {"op", "requestId", "query", "sessionToken"}) ||
      !known(query, {"className", "where", "keys", "fields", "watch"})) {
    peer_->Send(live::Error(live::kMalformed, "Additional properties not allowed", true, Client(), std::nullopt));
    return;
  }
  const json::string* class_name = StringField(query, "className");
  if (!class_name) return Fail(live::kMalformed, "query needs a className", request_id);
  const auto* where = query.if_contains("where");
  if (where && !where->is_null() && !where->is_object()) return Fail(live::kMalformed, "query.where must be an object", request_id);
  const auto* keys_value = query.if_contains("keys");
  if (!keys_value || keys_value->is_null()) keys_value = query.if_contains("fields");  // the older name
  auto keys = Names(keys_value);
  auto watch = Names(query.if_contains("watch"));
  if (!keys || !watch) return Fail(live::kMalformed, "query.keys and query.watch must be arrays of field names", request_id);
  const json::string* token = StringField(message, "sessionToken");

  if (!hub_.OptedIn(app_id_, *class_name))
    return Fail(errors::kOperationForbidden, live::NotEnabled(*class_name), request_id);
  auto existing = subs_.find(request_id);
  if (update && existing == subs_.end()) return Fail(live::kNotConnected, "No subscription with this requestId", request_id);
  if (existing == subs_.end() && subs_.size() >= kMaxSubscriptions)
    return Fail(errors::kOperationForbidden, "Too many subscriptions on one connection (" + std::to_string(kMaxSubscriptions) + ")", request_id);

  auto sub = std::make_shared<LiveSubscription>();
  sub->peer = peer_;
  sub->client_id = client_id_;
  sub->installation_id = installation_id_;
  sub->request_id = request_id;
  sub->app_id = app_id_;
  sub->class_name = std::string(*class_name);
  sub->headers = headers_;
  if (token && !token->empty()) {
    const std::string header = header_prefix_ + "session-token";
    std::erase_if(sub->headers, [&](const auto& h) { return h.first == header; });
    sub->headers.emplace_back(header, std::string(*token));
  }
  if (where && where->is_object()) sub->where = json::serialize(*where);
  for (const auto& k : *keys) sub->keys += (sub->keys.empty() ? "" : ",") + k;
  sub->watch = std::move(*watch);
  if (existing != subs_.end()) {
    hub_.Remove(existing->second);
    subs_.erase(existing);
  }
  if (auto added = hub_.Add(sub); !added.ok()) return Fail(added.error().code, added.error().message, request_id);
  subs_[request_id] = std::move(sub);
  engaged_ = true;
}

void LiveConnection::Unsubscribe(const json::object& message) {
  const auto* rid = message.if_contains("requestId");
  if (!rid || !rid->is_int64()) return Fail(live::kMalformed, "unsubscribe needs a numeric requestId");
  auto at = subs_.find(rid->get_int64());
  if (at == subs_.end()) return Fail(live::kNotConnected, "No subscription with this requestId", rid->get_int64());
  hub_.Remove(at->second);
  subs_.erase(at);
  peer_->Send(live::Reply("unsubscribed", Client(), rid->get_int64()));
}

void LiveConnection::OnClose() {
  for (auto& [id, sub] : subs_) hub_.Remove(sub);
  subs_.clear();
}

SocketUpgrade LiveQueryUpgrade(Router& router, LiveHub& hub) {
  return [&router, &hub](const Request& head, std::shared_ptr<SocketPeer> peer) -> std::shared_ptr<SocketHandler> {
    std::string_view path = head.target;
    path = path.substr(0, path.find('?'));
    while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
    if (path != "/" && path != "/" + router.prefix()) return nullptr;
    return std::make_shared<LiveConnection>(router, hub, std::move(peer));
  };
}

}  // namespace crmd::api
