#include "storage/sql/relation_statements.hpp"

namespace crmd::storage::sql {

std::string UnlinkOwner(const Dialect& d, std::string_view owner_class, std::string_view field) {
  return "DELETE FROM " + d.JoinTable(field, owner_class) + " WHERE " + d.Quote("owningId") + " = " + d.Placeholder(1);
}

SqlFragment RelationOwners(const Dialect& d, std::string_view owner_class, std::string_view field,
                           const std::vector<std::string>& related_ids) {
  SqlFragment out;
  Binder bind(d, out.params);
  out.sql = "SELECT DISTINCT " + d.Quote("owningId") + " FROM " + d.JoinTable(field, owner_class) + " WHERE " +
            d.TextIn(d.Quote("relatedId"), related_ids, bind);
  return out;
}

}  // namespace crmd::storage::sql
