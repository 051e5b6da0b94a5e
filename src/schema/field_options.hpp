// Parse's options of a declared field (spec §4.5 shows none; Parse Server's schema bodies):
// `{"type":"String","required":true,"defaultValue":"new"}`. `required` refuses a create without the
// field and an update clearing it; `defaultValue` is what a create that leaves the field out gets.
// A field without options has no entry: schemas of classes that use none read as before.
#pragma once

#include <boost/json.hpp>
#include <optional>
#include <string_view>

#include "schema/field_type.hpp"
#include "util/result.hpp"

namespace crmd::schema {

struct FieldOptions {
  bool required = false;
  // The wire value, already checked against the field's type when the schema was written.
  std::optional<boost::json::value> default_value;

  bool empty() const { return !required && !default_value; }
};

// The options in a field's schema spec (`required`, `defaultValue`), checked against `def` as
// Parse checks them: 111 for a default of another type, or for either option on a Relation. An
// absent, false or null option is no option.
Result<FieldOptions> ParseFieldOptions(const boost::json::object& spec, const FieldDef& def,
                                       std::string_view class_name, std::string_view field);

// Adds the options to a field's schema spec, as ParseFieldOptions reads them.
void WriteFieldOptions(const FieldOptions& options, boost::json::object& spec);

}  // namespace crmd::schema
