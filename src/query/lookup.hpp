// Parse's `$lookup` aggregate stage (issue 36), where the application's `parseNames` gate is on
// (docs/PROFILES.md): `{"$lookup":{"from":"<Class>","localField":"<f>","foreignField":"<g>",
// "as":"<name>"}}` puts into each result, under `as`, the records of `from` whose `g` equals the
// result's `f`. Only at the end of a pipeline: crmd's stages run in the store first, then each
// lookup reads `from` through the read door as the caller (query::ListRecords: its class-level
// `find` permission, the records' ACLs, protected fields), so a lookup shows only what a query of
// `from` would. `_id` names `objectId`; a Pointer matches by the record it names.
#pragma once

#include <string>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

#include "auth/context.hpp"
#include "util/result.hpp"

namespace crmd::query {

// Records one lookup may join, over all results: beyond, 400 102 (a lookup is one bounded read).
inline constexpr std::int64_t kMaxLookupRows = 10000;

struct Lookup {
  std::string from, local_field, foreign_field, as;
};

// The stage's argument; 102 when it is not the four names above (Parse's `pipeline` form of
// `$lookup` is not taken).
Result<Lookup> ParseLookup(const boost::json::value& arg);

// Adds each lookup's matches to every row of `rows` (objects), in order.
Status ApplyLookups(auth::Context& ctx, const std::vector<Lookup>& lookups, boost::json::array& rows);

}  // namespace crmd::query
