// Wire values (spec §2.2) <-> stored cells, checked against a field's type.
//
//   String, HTML/XML  TEXT         a JSON number written here is stored as its text (spec §2.2)
//   Number            INTEGER/REAL
//   Boolean           INTEGER 0/1
//   Date              TEXT         canonical ISO, `{"__type":"Date","iso":...}` on the wire
//   Pointer           TEXT         the objectId; the class is the field's targetClass
//   Array, Object     TEXT         JSON
//   File, PrivateFile TEXT         JSON `{"__type":"File","name":..,"url":..}`
//   Relation          no column    (join table)
#pragma once

#include <boost/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "schema/field_type.hpp"
#include "schema/row.hpp"
#include "util/result.hpp"

namespace crmd::schema {

// The type a first write of `value` gives a new field; nullopt for null (no field is created).
// Errors for values no field can hold (unknown `__type`, a Relation value).
Result<std::optional<FieldDef>> InferFieldType(const boost::json::value& value,
                                               std::string_view table, std::string_view field);

// How Parse names the type of a value in a 111 message: `String`, `Pointer<Accounts>`, ...
std::string DescribeValue(const boost::json::value& value);

// Checks `value` against `def` and converts it to its stored cell. `table` and `field` name the
// place in error messages. A null value is not handled here (callers record explicit nulls).
Result<Cell> EncodeValue(const boost::json::value& value, const FieldDef& def,
                                  std::string_view table, std::string_view field);

// The wire form of a stored cell; null for an SQL NULL.
boost::json::value DecodeCell(const Cell& cell, const FieldDef& def);

// Refuses keys starting with `$` or containing `.` anywhere inside an Object or Array value
// (spec's 121; the prototype-pollution and operator-injection class of SECURITY.md).
Status CheckNestedKeys(const boost::json::value& value);

}  // namespace crmd::schema
