#include "storage/postgres/generations.hpp"

#include <fmt/format.h>

namespace crmd::storage::postgres {

namespace {
// A class name as an SQL literal (names are the schema's identifiers; quotes doubled all the same).
std::string Literal(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}
}  // namespace

std::string GenerationsTable(const PgDialect& d) { return d.schema() + "._crmd_generation"; }

std::string CreateGenerations(const PgDialect& d) {
  return "CREATE TABLE IF NOT EXISTS " + GenerationsTable(d) + " (class text PRIMARY KEY, generation bigint NOT NULL)";
}

std::string MoveGenerations(const PgDialect& d, const std::set<std::string>& classes) {
  std::string values;
  for (const auto& cls : classes) values += (values.empty() ? "(" : ", (") + Literal(cls) + ", 1)";
  return fmt::format("INSERT INTO {0} (class, generation) VALUES {1} ON CONFLICT (class) DO UPDATE SET generation = {0}.generation + 1",
                     GenerationsTable(d), values);
}

std::string ReadGeneration(const PgDialect& d) {
  return "SELECT generation FROM " + GenerationsTable(d) + " WHERE class = $1";
}

std::string CountWithGeneration(const PgDialect& d, std::string_view cls, const std::string& where,
                                std::size_t class_param) {
  return fmt::format("SELECT COALESCE((SELECT generation FROM {} WHERE class = {}), 0), count(*) FROM {} AS t0 WHERE {}",
                     GenerationsTable(d), d.Placeholder(class_param), d.Table(cls), where);
}

}  // namespace crmd::storage::postgres
