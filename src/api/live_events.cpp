#include "api/live_events.hpp"

#include <boost/json.hpp>

#include "api/live_messages.hpp"
#include "api/socket.hpp"
#include "util/errors.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"
#include "util/strings.hpp"

namespace crmd::api {

namespace json = boost::json;

namespace {

// The stream's one subscription, ended with it.
class EventStream final : public SocketHandler {
 public:
  EventStream(LiveHub& hub, std::shared_ptr<LiveSubscription> sub) : hub_(hub), sub_(std::move(sub)) {}
  void OnMessage(std::string_view) override {}  // a stream has no messages from the client
  void OnClose() override { hub_.Remove(sub_); }

 private:
  LiveHub& hub_;
  std::shared_ptr<LiveSubscription> sub_;
};

std::vector<std::string> NameList(const std::string& text) {
  std::vector<std::string> out;
  for (std::string_view name : Split(text, ','))
    if (!name.empty()) out.emplace_back(name);
  return out;
}

}  // namespace

Response LiveEvents(LiveHub& hub, LiveTickets& tickets, const Target& target) {
  auto ticket = tickets.Take(target.Param("ticket"));
  if (!ticket) return ErrorResponse(ApiError{403, 0, "Invalid or expired ticket", ErrorBody::kErrorOnly});
  const std::string class_name = target.Param("className");
  if (class_name.empty()) return ErrorResponse(errors::BadRequest("className is required."));
  if (!hub.OptedIn(ticket->app_id, class_name))
    return ErrorResponse(ApiError{403, errors::kOperationForbidden, live::NotEnabled(class_name)});
  auto sub = std::make_shared<LiveSubscription>();
  if (const std::string where = target.Param("where"); !where.empty()) {
    auto parsed = ParseJson(where);
    if (!parsed.ok() || !parsed.value().is_object())
      return ErrorResponse(ApiError{400, errors::kInvalidQuery, "where must be a JSON object"});
    sub->where = json::serialize(parsed.value());
  }
  sub->client_id = ids::RandomAlnum(live::kClientIdLength);
  sub->request_id = 1;
  sub->app_id = ticket->app_id;
  sub->class_name = class_name;
  sub->headers = std::move(ticket->headers);
  sub->keys = target.Param("keys");
  sub->watch = NameList(target.Param("watch"));
  Response out;
  out.content_type = "text/event-stream";
  out.app_id = sub->app_id;
  out.event_stream = [&hub, sub](std::shared_ptr<SocketPeer> peer) -> std::shared_ptr<SocketHandler> {
    sub->peer = peer;
    if (auto added = hub.Add(sub); !added.ok()) {
      peer->Send(live::Error(added.error().code, added.error().message, false, sub->client(), sub->request_id));
      peer->Close("refused");
    }
    return std::make_shared<EventStream>(hub, sub);
  };
  return out;
}

}  // namespace crmd::api
