// A stored row as the record API returns it (DESIGN.md "A read"): objectId, createdAt and
// updatedAt flat, every field in its wire format (Date as `{"__type":"Date",...}`), explicit
// nulls as null, the ACL when set.
#pragma once

#include <boost/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "schema/class_schema.hpp"
#include "schema/row.hpp"

namespace crmd::schema {

// `row` must come from a storage read of `cls` (its cells follow the class's stored fields).
boost::json::object EncodeRow(const ClassSchema& cls, const Row& row);

// The same object written straight as JSON text (the hot path of get and find without include
// or keys): no intermediate DOM, and stored JSON values (Object, Array, File, ACL; written by
// crmd's serializer) are copied verbatim instead of parsed and re-serialised.
void WriteRow(const ClassSchema& cls, const Row& row, std::string& out);

// Include without buffering rows: each included Pointer is written as a Pointer and its place
// noted; once the chunk's records are looked up, SpliceIncluded writes the text again with each
// noted Pointer replaced by its record's text, where one was found.
struct PointerSpan {
  std::size_t begin = 0, end = 0;  // the Pointer's JSON in the written text
  std::string_view field;          // a field name of the class written (it outlives the spans)
  std::string id;
};
// WriteRow, noting in `spans` every Pointer of a field `included` names.
void WriteRow(const ClassSchema& cls, const Row& row, const std::vector<std::string>& included,
              std::vector<PointerSpan>& spans, std::string& out);

// Pointers to write as the records they point at: field -> objectId -> the included record's JSON
// text. A pointer not found here stays a Pointer.
using Expansions = std::unordered_map<std::string, std::unordered_map<std::string, std::string>>;
// `text` (written with `spans` noted) appended to `out` with each noted Pointer expanded.
void SpliceIncluded(std::string_view text, const std::vector<PointerSpan>& spans, const Expansions& expansions,
                    std::string& out);

// The record as an include shows it: `{"__type":"Object","className":...}` and then its fields,
// as EncodeRow's object with those two keys put first.
void WriteIncludedRow(const ClassSchema& cls, const Row& row, std::string& out);

}  // namespace crmd::schema
