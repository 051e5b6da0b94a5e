// The read pipeline (DESIGN.md "A read"): authorise, parse `where` against the schema, run the
// query in storage, expand includes with one batched lookup per pointer field and level, project
// `keys`, encode. Every path that reads records (get, list, include, `$inQuery`, later batch,
// functions, MCP, /users/me) goes through here and so through the same auth::Authorize.
#pragma once

#include <boost/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "auth/context.hpp"
#include "util/result.hpp"

namespace crmd::query {

// Include paths nest at most this deep (`a.b.c.d.e.f.g.h`): each level is one lookup, and a
// client must not make one request cost unbounded work.
inline constexpr std::size_t kMaxIncludeDepth = 8;
// `include=*`: every Pointer and Array field of the class read, one level (Parse).
inline constexpr std::string_view kIncludeAll = "*";

struct ListRequest {
  std::optional<boost::json::value> where;          // parsed, not yet validated
  std::vector<std::pair<std::string, bool>> order;  // field, descending
  std::int64_t limit = 100;                         // spec §4.2 default; no maximum
  std::int64_t skip = 0;
  bool count = false;
  std::vector<std::string> include;                 // dotted paths
  std::optional<std::vector<std::string>> keys;     // dotted paths; nullopt: every field
};

// 200 body: the full object. 404 101 when missing or hidden by its ACL.
Result<boost::json::object> GetRecord(auth::Context& ctx, std::string_view class_name,
                                      std::string_view object_id,
                                      const std::vector<std::string>& include,
                                      const std::optional<std::vector<std::string>>& keys);

// The same answer appended to `out` as JSON text (no DOM when there is nothing to expand or
// project: the hot path of get-by-id).
Status WriteRecord(auth::Context& ctx, std::string_view class_name, std::string_view object_id,
                   const std::vector<std::string>& include, const std::optional<std::vector<std::string>>& keys,
                   std::string& out);

// Appends the 200 body `{"results":[...]}` (plus `"count"` when asked) to `out`, streaming: rows
// are encoded in chunks, so a large result is held once, as JSON text. A class that does not
// exist has no rows (not an error).
Status ListRecords(auth::Context& ctx, std::string_view class_name, const ListRequest& request,
                   std::string& out);

// Splits `a,b.c` into paths, checking depth and names (102 on a bad one); `*` is kept as a path.
Result<std::vector<std::string>> ParseIncludeList(std::string_view text);
// Splits a `keys` list into dotted paths (105 on a bad name).
Result<std::vector<std::string>> ParseKeysList(std::string_view text);

}  // namespace crmd::query
