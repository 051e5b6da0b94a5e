// A stored row as the record API returns it (DESIGN.md "A read"): objectId, createdAt and
// updatedAt flat, every field in its wire format (Date as `{"__type":"Date",...}`), explicit
// nulls as null, the ACL when set.
#pragma once

#include <boost/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "schema/class_schema.hpp"
#include "storage/row.hpp"

namespace crmd::query {

// `row` must come from a storage read of `cls` (its cells follow the class's stored fields).
boost::json::object EncodeRow(const schema::ClassSchema& cls, const storage::Row& row);

// The same object written straight as JSON text (the hot path of get and find without include
// or keys): no intermediate DOM, and stored JSON values (Object, Array, File, ACL; written by
// crmd's serializer) are copied verbatim instead of parsed and re-serialised.
void WriteRow(const schema::ClassSchema& cls, const storage::Row& row, std::string& out);

// Pointers to write as the records they point at (include): field -> objectId -> the included
// record's JSON text. A pointer not found here is written as a Pointer.
using Expansions = std::unordered_map<std::string, std::unordered_map<std::string, std::string>>;
void WriteRow(const schema::ClassSchema& cls, const storage::Row& row, const Expansions& expansions,
              std::string& out);

// The record as an include shows it: `{"__type":"Object","className":...}` and then its fields,
// as EncodeRow's object with those two keys put first.
void WriteIncludedRow(const schema::ClassSchema& cls, const storage::Row& row, std::string& out);

}  // namespace crmd::query
