// Transport-agnostic request and response. http/ builds a Request from the socket; batch items
// and tests build one directly. Handlers never see Beast types.
#pragma once

#include <boost/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/result.hpp"

namespace crmd::api {

enum class Method { kGet, kPost, kPut, kDelete, kOptions, kHead, kOther };

struct Request {
  Method method = Method::kGet;
  std::string method_name;  // as sent, for messages ("PATCH")
  std::string target;       // raw request-target: path and query, still percent-encoded
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case
  std::string body;
  std::string remote_ip;

  // The first header named `lower_name`, if present.
  std::optional<std::string_view> Header(std::string_view lower_name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json; charset=utf-8";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

Response JsonResponse(int status, const boost::json::value& body);
// The one place an ApiError becomes a body (its three shapes: spec §7).
Response ErrorResponse(const ApiError& error);

}  // namespace crmd::api
