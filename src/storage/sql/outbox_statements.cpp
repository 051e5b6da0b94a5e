#include "storage/sql/outbox_statements.hpp"

namespace crmd::storage::sql {

std::string AddOutbox(const Dialect& d) {
  return "INSERT INTO " + d.Table(kOutboxTable) + " (lane, payload) VALUES (" + d.Placeholder(1) + ", " +
         d.Placeholder(2) + ") RETURNING id";
}

std::string GetOutbox(const Dialect& d) {
  return "SELECT id, lane, payload FROM " + d.Table(kOutboxTable) + " WHERE id = " + d.Placeholder(1);
}

std::string SetOutbox(const Dialect& d) {
  return "UPDATE " + d.Table(kOutboxTable) + " SET payload = " + d.Placeholder(1) + " WHERE id = " + d.Placeholder(2);
}

std::string RemoveOutbox(const Dialect& d) {
  return "DELETE FROM " + d.Table(kOutboxTable) + " WHERE id = " + d.Placeholder(1);
}

std::string ReadOutbox(const Dialect& d) {
  return "SELECT id, lane, payload FROM " + d.Table(kOutboxTable) + " WHERE id > " + d.Placeholder(1) +
         " ORDER BY id LIMIT " + d.Placeholder(2);
}

}  // namespace crmd::storage::sql
