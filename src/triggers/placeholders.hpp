// `{{Field}}` in an action's strings (docs/TRIGGERS.md): the triggering record's value of Field.
// A Pointer gives its objectId, a Date its ISO time, a string itself, a number or boolean its JSON
// text; a field the record lacks, or null, the empty string. `{{` not followed by a field name
// and `}}` is kept as written.
#pragma once

#include <boost/json.hpp>
#include <string>
#include <string_view>

namespace crmd::triggers {

std::string Fill(std::string_view text, const boost::json::object& record);
// Every string inside `value` (keys stay as they are), filled.
boost::json::value FillAll(const boost::json::value& value, const boost::json::object& record);

}  // namespace crmd::triggers
