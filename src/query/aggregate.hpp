// `GET /classes-aggregate/{T}` (spec §4.6; parameters and answer: Parse's). The pipeline may
// hold, in this order: `$match` (the `where` language, ACLs applied), `$group` (`_id` null or
// "$field"; `$sum`, `$avg`, `$min`, `$max`, `$count`), `$sort`, `$skip`, `$limit`, `$project`,
// `$count`. A pipeline without `$group` is a find. `distinct=<field>` lists distinct values.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "auth/context.hpp"
#include "util/result.hpp"

namespace crmd::query {

// Groups one aggregation may produce before sort/skip/limit apply: bounds memory per request.
inline constexpr std::size_t kMaxGroups = 100000;

// `params`: the decoded query parameters. Appends `{"results":[...]}` to `out`.
Status Aggregate(auth::Context& ctx, std::string_view class_name,
                 const std::vector<std::pair<std::string, std::string>>& params, std::string& out);

}  // namespace crmd::query
