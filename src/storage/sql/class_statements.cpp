#include "storage/sql/class_statements.hpp"

namespace crmd::storage::sql {

std::string LoadClasses(const Dialect& d) {
  return "SELECT definition FROM " + d.Table(kClassTable) + " ORDER BY " + d.Quote("className");
}

std::string SaveClass(const Dialect& d) {
  const std::string name = d.Quote("className");
  return "INSERT INTO " + d.Table(kClassTable) + " (" + name + ", definition) VALUES (" + d.Placeholder(1) + ", " +
         d.Placeholder(2) + ") ON CONFLICT (" + name + ") DO UPDATE SET definition = excluded.definition";
}

std::string DropClass(const Dialect& d) {
  return "DELETE FROM " + d.Table(kClassTable) + " WHERE " + d.Quote("className") + " = " + d.Placeholder(1);
}

}  // namespace crmd::storage::sql
