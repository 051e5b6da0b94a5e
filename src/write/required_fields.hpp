// The write side of Parse's field options (schema/field_options.hpp): default values a create
// fills in, and required fields a write may not leave empty.
#pragma once

#include <boost/json.hpp>
#include <optional>

#include "schema/class_schema.hpp"
#include "util/result.hpp"
#include "write/field_changes.hpp"

namespace crmd::write {

// `body` with the default of every field it leaves out (absent, or `{"__op":"Delete"}`), as Parse
// fills them; nullopt when there is none to fill (the body is used as it is).
std::optional<boost::json::object> WithDefaults(const boost::json::object& body, const schema::ClassSchema& cls);

// 400 142 `<field> is required` (Parse's words) when a required field is empty: a create that
// leaves it absent, null, "" or deleted; an update that sets it to null, "" or deletes it.
Status CheckRequired(const boost::json::object& body, const schema::ClassSchema& cls, WriteKind kind);

}  // namespace crmd::write
