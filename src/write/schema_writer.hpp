// Schema changes requested through `/schemas` (spec §4.5, §2.5; Parse's body shapes). Callers
// check the credential (master or API key).
#pragma once

#include <boost/json.hpp>
#include <string_view>

#include "auth/context.hpp"
#include "util/result.hpp"

namespace crmd::write {

// `POST /schemas/{T}`: a new class (400 103 when it exists) with empty class-level permissions
// for every operation (spec §2.5) unless the body sets them. Answers the schema object.
Result<boost::json::object> CreateSchema(auth::Context& ctx, std::string_view class_name,
                                         const boost::json::object& body);

// `PUT /schemas/{T}`: adds or deletes fields (`{"__op":"Delete"}`, data included), merges
// class-level permissions, adds or drops indexes. A refused body changes nothing.
Result<boost::json::object> UpdateSchema(auth::Context& ctx, std::string_view class_name,
                                         const boost::json::object& body);

// `DELETE /schemas/{T}`: drops an empty class (255 when it holds records).
Result<boost::json::object> DeleteSchema(auth::Context& ctx, std::string_view class_name);

}  // namespace crmd::write
