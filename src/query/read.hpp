// The read pipeline (DESIGN.md "A read"): authorise, run the query in storage, expand includes
// with one batched lookup per pointer field and level, encode.
// Every path that reads records (get, list, include, later batch, functions, MCP, /users/me)
// goes through here and so through the same auth::Authorize.
#pragma once

#include <boost/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "auth/context.hpp"
#include "storage/database.hpp"
#include "util/result.hpp"

namespace crmd::query {

// Include paths nest at most this deep (`a.b.c.d.e.f.g.h`): each level is one lookup, and a
// client must not make one request cost unbounded work.
inline constexpr std::size_t kMaxIncludeDepth = 8;

struct ListRequest {
  storage::FindOptions find;
  std::vector<std::string> include;  // dotted paths
};

// 200 body: the full object. 404 101 when missing (or, later, hidden by its ACL).
Result<boost::json::object> GetRecord(auth::Context& ctx, std::string_view class_name,
                                      std::string_view object_id,
                                      const std::vector<std::string>& include);

// 200 body `{"results":[...]}`; a class that does not exist has no rows (not an error).
Result<boost::json::object> ListRecords(auth::Context& ctx, std::string_view class_name,
                                        const ListRequest& request);

// Splits `a,b.c` into paths, checking depth and names (102 on a bad one).
Result<std::vector<std::string>> ParseIncludeList(std::string_view text);

}  // namespace crmd::query
