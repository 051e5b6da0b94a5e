// `$options` of a `$regex` (spec §4.3; Parse accepts the flags i, m, s and x) turned into the RE2
// pattern that means the same: i, m and s become RE2's inline flags; x, which RE2 lacks, is applied
// to the pattern (whitespace and `#` comments outside character classes dropped).
#pragma once

#include <string>
#include <string_view>

#include "util/result.hpp"

namespace crmd::query {

// 400 102 `Bad $options value for query: <options>` (Parse's words) for any other flag; an empty
// `options` is no flag.
Result<std::string> ApplyRegexOptions(std::string_view pattern, std::string_view options);

}  // namespace crmd::query
