// Keys that reach inside an Object field in an update (`{"address.city": "Haifa"}`,
// `{"stats.visits": {"__op":"Increment","amount":1}}`, `{"stats.old": {"__op":"Delete"}}`), as
// Parse takes them; only where the application's gates allow them (auth::Gates::dotted_keys).
// Each is folded into its field's whole new value, made from the stored one inside the write, so
// the write unit that serializes the application's writes makes the change atomic.
#pragma once

#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "schema/class_schema.hpp"
#include "util/result.hpp"
#include "write/field_changes.hpp"

namespace crmd::write {

bool HasDottedKeys(const boost::json::object& body);

// The fields the dotted keys of `body` reach into: what the update must read first.
void AddDottedFields(const boost::json::object& body, std::vector<std::string_view>& fields);

// `body` with each dotted key replaced by its field's new value, built from `current` (or from
// the field's own value in the body, when the body sets it too). 111 when the field is no Object
// (a builtin one, ACL among them, never is) or a key reaches through a value that is no object;
// 108 for an operator other than Increment and Delete inside a field.
Result<boost::json::object> FoldDottedKeys(const boost::json::object& body, const schema::ClassSchema& cls,
                                           const CurrentValues& current);

// What an update answers for the Increments among the dotted keys of `sent`: each one's result,
// read from `folded`, at its path (`{"stats":{"visits":3}}`), as Parse answers them. The SDK
// otherwise takes the amount alone for the new value.
boost::json::object DottedIncrementResults(const boost::json::object& sent, const boost::json::object& folded);

}  // namespace crmd::write
