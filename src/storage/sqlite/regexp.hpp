// `crmd_regexp(pattern, value)`: `$regex` evaluated by RE2 inside SQLite, in time linear in the
// value (no ReDoS). The pattern is a bound value; it was validated by query/where_parser.
#pragma once

#include <sqlite3.h>

namespace crmd::storage::sqlite {

// `bounded`: a call made once the thread's ReadDeadline passed interrupts its statement
// (Connection::BoundReads).
void RegisterRegexp(sqlite3* db, bool bounded = false);

}  // namespace crmd::storage::sqlite
