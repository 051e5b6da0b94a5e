// Transport-agnostic request and response. http/ builds a Request from the socket; batch items
// and tests build one directly. Handlers never see Beast types.
#pragma once

#include <boost/json.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/result.hpp"

namespace crmd::api {

class SocketPeer;
class SocketHandler;

enum class Method { kGet, kPost, kPut, kDelete, kOptions, kHead, kOther };

struct Request {
  Method method = Method::kGet;
  std::string method_name;  // as sent, for messages ("PATCH")
  std::string target;       // raw request-target: path and query, still percent-encoded
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case
  std::string body;
  // An upload's body, streamed to this file by the server (ServerOptions::upload_dir), which
  // removes it after the handler unless the handler moved it away; `body` is then empty.
  std::string body_file;
  // The body already parsed, when something before the handler had to parse it anyway (a queued
  // write, on the network thread; a batch item, as part of its batch): JSON handlers read this
  // instead of parsing `body` again. Batch items carry only this, with `body` empty.
  // Its memory may be an arena of its own, which is not thread-safe, which a copy-constructed
  // value shares, and which ends with this pointer's last owner: copy out of it only into default
  // storage (json::value(v, json::storage_ptr())), or into a container, whose elements take the
  // container's storage.
  std::shared_ptr<const boost::json::value> json_body;
  // The client's address: the peer's, or what a trusted proxy says (http/trusted_proxies.hpp).
  std::string remote_ip;
  // The client reached the proxy over HTTPS, as a trusted proxy says (the gate's Secure cookie).
  bool https = false;
  // A read handled again off the network threads, after it ran past its slice on one
  // (Response::run_off_loop): it gets the whole read timeout, counted from `arrived`.
  bool off_loop = false;
  // When the request was read whole (the server sets it).
  std::chrono::steady_clock::time_point arrived = std::chrono::steady_clock::now();

  // The first header named `lower_name`, if present.
  std::optional<std::string_view> Header(std::string_view lower_name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json; charset=utf-8";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // Called by the server once the answer went out (or could not), with its status and the time
  // from the request's head to then: where a write request's `_RequestLog` row is made. Must not
  // block or throw.
  std::function<void(int status, double duration_ms)> sent;
  // A body sent from this file instead of `body`: `file_length` bytes from `file_offset`. The
  // server streams it (a large file never sits in memory).
  std::string file;
  std::uint64_t file_offset = 0;
  std::uint64_t file_length = 0;
  // The application the request was for, once the router knew it: the access log's `app`.
  std::string app_id;
  // Not an answer: the read ran past its slice on a network thread and is to be handled again on
  // a thread of slow reads (Request::off_loop), so the network thread's other connections wait no
  // longer.
  bool run_off_loop = false;
  // Not a body: a stream of server-sent events (issue 36, `text/event-stream`). The server sends
  // the head with `status` and `headers`, then each message the handler's peer Send()s as one
  // `data:` event, until either side ends it (api/socket.hpp). Called once, on the connection's
  // thread, with the peer.
  std::function<std::shared_ptr<SocketHandler>(std::shared_ptr<SocketPeer>)> event_stream;
};

// The body of a request whose body must be a JSON object: `json_body` when the request carries it,
// else `body` parsed into `storage`. 107 when it is no JSON, 107 (BodyNotObject) when no object.
Result<const boost::json::object*> BodyObject(const Request& request, boost::json::value& storage);

Response JsonResponse(int status, const boost::json::value& body);
// The one place an ApiError becomes a body (its three shapes: spec §7).
Response ErrorResponse(const ApiError& error);
// Parse's SDKs read an error's text from `error` and fail on an answer without one: the spec's
// 500 (`{"code":1,"message":…}`) gets `error` beside `message` (the parseNames gate).
void NameErrorForParse(Response& response);

}  // namespace crmd::api
