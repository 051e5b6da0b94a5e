#include "storage/sqlite/regexp.hpp"

#include <re2/re2.h>

#include "schema/query.hpp"
#include "storage/database.hpp"

#include <string_view>

namespace crmd::storage::sqlite {

namespace {

void DeleteRegexp(void* p) { delete static_cast<RE2*>(p); }

// 1 when `value` (text) contains a match of `pattern`; 0 otherwise, also for non-text values
// (Mongo's $regex never matches numbers). The compiled pattern is cached per statement.
void Regexp(sqlite3_context* ctx, int, sqlite3_value** argv) {
  // One call can take tens of milliseconds on a large value, and a statement makes few steps
  // between calls: SQLite's progress handler would not see a deadline pass for a long time.
  // The call fails the statement: answering "no match" would let a statement that checks no
  // interrupt before its end return a cut result as if it were whole.
  if (sqlite3_user_data(ctx) != nullptr && ReadDeadline::Passed()) {
    sqlite3_result_error_code(ctx, SQLITE_INTERRUPT);
    return;
  }
  if (sqlite3_value_type(argv[1]) != SQLITE_TEXT) {
    sqlite3_result_int(ctx, 0);
    return;
  }
  auto* re = static_cast<RE2*>(sqlite3_get_auxdata(ctx, 0));
  if (!re) {
    const auto* pattern = reinterpret_cast<const char*>(sqlite3_value_text(argv[0]));
    if (!pattern) {
      sqlite3_result_int(ctx, 0);
      return;
    }
    RE2::Options options;
    options.set_log_errors(false);
    // Its automaton's memory, per pattern and statement: past it RE2 runs slower, not larger.
    options.set_max_mem(schema::kRegexMemory);
    re = new RE2(std::string_view(pattern, static_cast<std::size_t>(sqlite3_value_bytes(argv[0]))),
                 options);
    if (!re->ok()) {
      delete re;
      sqlite3_result_error(ctx, "invalid regular expression", -1);
      return;
    }
    sqlite3_set_auxdata(ctx, 0, re, DeleteRegexp);
    re = static_cast<RE2*>(sqlite3_get_auxdata(ctx, 0));
    if (!re) {
      sqlite3_result_error_nomem(ctx);
      return;
    }
  }
  const auto* text = reinterpret_cast<const char*>(sqlite3_value_text(argv[1]));
  std::string_view value(text, static_cast<std::size_t>(sqlite3_value_bytes(argv[1])));
  sqlite3_result_int(ctx, RE2::PartialMatch(value, *re) ? 1 : 0);
}

}  // namespace

void RegisterRegexp(sqlite3* db, bool bounded) {
  static char bounded_marker;
  sqlite3_create_function_v2(db, "crmd_regexp", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                             bounded ? &bounded_marker : nullptr, Regexp, nullptr, nullptr, nullptr);
}

}  // namespace crmd::storage::sqlite
