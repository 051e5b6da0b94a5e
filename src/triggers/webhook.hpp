// One delivery of a `webhook` trigger action (docs/TRIGGERS.md, "Webhooks"): an HTTP POST of the
// record as JSON, signed with the application's webhook secret, to a public address only.
//
// PostWebhook blocks its caller for at most WebhookOptions::timeout and is thread-safe (one curl
// handle per call; libcurl made ready by the first call, util/curl_library.hpp).
// Retrying is the caller's business: the Delivery says whether a retry may help.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace crmd::triggers {

struct Webhook {
  std::string url;
  // The definition's own headers, their placeholders already filled.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;    // JSON text: the record
  std::string secret;  // the application's webhook secret
  std::string event, class_name, trigger_id, delivery_id;
};

struct WebhookOptions {
  // `crmd serve --allow-private-webhooks`: for a receiver on the operator's own network.
  bool allow_private = false;
  std::chrono::milliseconds timeout{10'000};
};

// Not delivered and not to be retried: the receiver answered 3xx or a 4xx other than 408 and 429,
// the destination is not a public address, or the URL or a filled header is not acceptable.
struct Delivery {
  bool delivered = false;
  bool retry = false;
  std::string error;  // empty when delivered
  long status = 0;    // the HTTP status, 0 when there was no answer
};

Delivery PostWebhook(const Webhook& hook, const WebhookOptions& options);

// `v1=` and the lowercase hex HMAC-SHA256 of `<timestamp>.<body>`, keyed with the secret's text.
std::string SignWebhook(std::string_view secret, std::string_view timestamp, std::string_view body);

// Checks of a definition at `PUT /schemas` time: nullopt, or a message saying what is wrong.
// `{{Field}}` placeholders are accepted in the URL (PostWebhook checks the URL again once filled).
std::optional<std::string> CheckWebhookUrl(std::string_view url);
std::optional<std::string> CheckWebhookHeaders(const boost::json::value& headers);

}  // namespace crmd::triggers
