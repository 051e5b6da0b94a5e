#include "api/batch.hpp"
#include "api/commit_answer.hpp"

#include "app/application.hpp"
#include "storage/write_group.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"
#include "util/log.hpp"

namespace crmd::api {

namespace json = boost::json;

namespace {

ApiError BatchError(std::string message) { return ApiError{400, errors::kInvalidJson, std::move(message)}; }

// The item error of spec §4.4 for GET items and bodiless POSTs: no code, Parse's JavaScript text.
json::object UndefinedItem() {
  return json::object{{"error", json::object{{"error", "Cannot convert undefined or null to object"}}}};
}

struct Item {
  std::string method;
  std::string path;  // as sent, with the prefix
  const json::value* body = nullptr;
};

}  // namespace

Response HandleBatch(const Request& request, auth::Context& ctx, const std::string& prefix,
                     const Dispatch& dispatch) {
  // The body parsed before the batch was queued, or parsed here; items share it.
  std::shared_ptr<const json::value> whole = request.json_body;
  if (!whole) {
    auto parsed = ParseJson(request.body);
    if (!parsed.ok()) return ErrorResponse(parsed.error());
    whole = std::make_shared<const json::value>(std::move(parsed).value());
  }
  const auto* requests = whole->is_object() ? whole->get_object().if_contains("requests") : nullptr;
  if (!requests || !requests->is_array()) return ErrorResponse(BatchError("requests must be an array"));
  if (requests->get_array().size() > kMaxBatchItems)
    return ErrorResponse(BatchError("requests holds more than " + std::to_string(kMaxBatchItems) + " items"));

  // Every item is routable or the whole batch is refused, before anything runs (Parse).
  const std::string mount = "/" + prefix;
  std::vector<Item> items;
  for (const auto& value : requests->get_array()) {
    Item item;
    if (value.is_object()) {
      const auto& o = value.get_object();
      if (const auto* m = o.if_contains("method"); m && m->is_string()) item.method = std::string(m->get_string());
      if (const auto* p = o.if_contains("path"); p && p->is_string()) item.path = std::string(p->get_string());
      if (const auto* b = o.if_contains("body"); b && !b->is_null()) item.body = b;
    }
    if (!item.path.starts_with(mount + "/"))
      return ErrorResponse(BatchError("cannot route batch path " + item.path));
    if (item.method != "POST" && item.method != "PUT" && item.method != "DELETE" && item.method != "GET")
      return ErrorResponse(BatchError("cannot route " + item.method + " " + item.path.substr(mount.size())));
    // Parse routes no batch inside a batch; the password page (`/apps/...`) is a page for a
    // browser, of whichever application its path names, not an API route.
    const std::string_view route = std::string_view(item.path).substr(mount.size());
    if (route.starts_with("/batch") || route.starts_with("/apps/"))
      return ErrorResponse(BatchError("cannot route batch path " + item.path));
    items.push_back(std::move(item));
  }

  // The answer is written as text: each item's answer is JSON text already, and parsing it back
  // to serialise it again cost as much as the item's own parse.
  std::string results = "[";
  const auto run_items = [&] {
    for (const auto& item : items) {
      if (results.size() > 1) results.push_back(',');
      if (item.method == "GET" || (item.method != "DELETE" && !item.body)) {
        WriteJson(UndefinedItem(), results);
        continue;
      }
      Request sub;
      sub.method = item.method == "POST" ? Method::kPost : item.method == "PUT" ? Method::kPut : Method::kDelete;
      sub.method_name = item.method;
      sub.target = item.path;
      sub.headers = request.headers;  // credentials are sent once for the whole batch (spec §4.4)
      sub.remote_ip = request.remote_ip;
      if (item.body) sub.json_body = std::shared_ptr<const json::value>(whole, item.body);
      Response answer;
      try {
        answer = dispatch(sub);
      } catch (const std::exception& e) {
        // The item's write was rolled back when it unwound; the others stand.
        log::Error("batch item failed", {{"method", item.method}, {"error", e.what()}});
        answer = ErrorResponse(errors::Internal());
      }
      results += answer.status >= 200 && answer.status < 300 ? "{\"success\":" : "{\"error\":";
      // Handlers write their JSON answers with WriteJson; a body that is not JSON stands as {}.
      if (answer.body.empty() || (answer.body.front() != '{' && answer.body.front() != '['))
        results += "{}";
      else
        results += answer.body;
      results.push_back('}');
    }
    results.push_back(']');
  };

  // One write group for the whole batch: every item is a write unit of its own in it, so each
  // fails alone (spec §4.4: no rollback of the others) and all of them are made durable by one
  // commit before the answer (one fsync). An item that must grow the schema runs alone,
  // exclusively, once the items before it are durable. In an application's write queue the
  // queue's group is the batch's. Not one unit for the batch: its savepoint would keep the
  // original of every page the batch changes in SQLite's sub-journal (docs/PERFORMANCE.md,
  // "Write unit of work").
  if (ctx.queued || ctx.unit) {
    run_items();
  } else {
    const storage::WriteGroups::Job job = [&](storage::WriteGroup& group) {
      ctx.queued = &group;  // the batch's group is the items' only while they run
      struct Restore {
        auth::Context& ctx;
        ~Restore() { ctx.queued = nullptr; }
      } restore{ctx};
      run_items();
    };
    const auto outcome = ctx.app->db().CommitBatch({&job, 1})[0];
    if (!storage::Durable(outcome)) return ErrorResponse(CommitError(outcome));
  }
  Response response;
  response.body = std::move(results);
  return response;
}

}  // namespace crmd::api
