// An application's store as a stream of JSON lines, and back (issue 22's migration between
// stores: `crmd app export` then `crmd app import`, SQLite to PostgreSQL or the other way). What
// it carries is what the store holds, as stored: class definitions, every row with its own
// objectId, dates, ACL and explicit nulls (users, sessions, history and logs are classes like any
// other; file fields hold their addresses), the pairs of every Relation, and the trigger
// activations still waiting. Rows are read by objectId in pages, so a large class is never held
// whole. The import checks at the end that every class holds as many rows as were exported.
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <map>
#include <ostream>
#include <string>
#include <string_view>

#include "storage/database.hpp"

namespace crmd::storage {

struct TransferCounts {
  std::map<std::string, std::int64_t> rows;  // by class
  std::int64_t relations = 0;                 // (owner, related) pairs
  std::int64_t outbox = 0;                    // trigger activations
};

// One line of an export: an object of one key, `{"<kind>": <body>}`. Throws std::runtime_error with
// `unreadable` when the line is not one.
struct ExportLine {
  std::string kind;
  boost::json::value body;
};
ExportLine ReadExportLine(std::string_view line, const char* unreadable);

// Writes the store's lines after `header` (one JSON object, the caller's: what the registry knows
// of the application). Returns what was written.
TransferCounts ExportStore(Database& db, const boost::json::object& header, std::ostream& out);

// Reads lines ExportStore wrote into `db`, which must hold no class yet; `header` receives the
// first line. Reads up to the end line and no further: the lines after it are the caller's
// (`crmd app export` appends the application's files). Throws std::runtime_error when the stream is not an export, the store is not empty,
// or a count does not match at the end.
TransferCounts ImportStore(Database& db, std::istream& in, boost::json::object& header);

}  // namespace crmd::storage
