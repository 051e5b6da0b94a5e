// Parse's `$score` (issue 36, the `parseNames` gate, docs/PROFILES.md): `order=$score` sorts the
// results of a query with a `$text` constraint by relevance, best first, and `keys=$score` adds
// each result's `score`. crmd's two stores rank text differently (FTS5's bm25, PostgreSQL's
// ts_rank), so the score is crmd's own and the same on both: the share of the words of the
// searched field that are search terms, after the same lower-casing as `$text`. The query runs
// through the read door as any list does (query::ListRecords); a score order reads every match,
// at most kMaxScoredRows of them, and pages in memory.
#pragma once

#include <string>
#include <string_view>

#include "auth/context.hpp"
#include "query/read.hpp"
#include "util/result.hpp"

namespace crmd::query {

// Matches a `$score` order reads at most: beyond, 400 102 (narrow the `where`).
inline constexpr std::int64_t kMaxScoredRows = 10000;

// `request` as the client sent it, less `$score` in its order and keys; `order_by_score` and
// `show_score` say where `$score` was. 102 `Invalid parameter for query: order` without a
// top-level `$text` constraint.
Status ListByScore(auth::Context& ctx, std::string_view class_name, ListRequest request, bool order_by_score,
                   bool show_score, std::string& out);

}  // namespace crmd::query
