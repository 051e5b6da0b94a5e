// Schema changes requested through `/schemas` (spec §4.5, Parse's body shapes). For now:
// declaring and dropping indexes (including the text indexes `$text` needs) and setting
// class-level permissions. Fields arrive with the schema issue.
#pragma once

#include <boost/json.hpp>
#include <string_view>

#include "auth/context.hpp"
#include "util/result.hpp"

namespace crmd::write {

// `PUT /schemas/{T}` with `{"indexes": {"<name>": {"<field>": 1 | -1 | "text"} | {"__op":"Delete"}}}`.
// Answers the class's schema object. Master and API keys only (callers check).
Result<boost::json::object> UpdateSchema(auth::Context& ctx, std::string_view class_name,
                                         const boost::json::object& body);

}  // namespace crmd::write
