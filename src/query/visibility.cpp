#include "query/visibility.hpp"

#include "auth/acl.hpp"
#include "auth/authorize.hpp"
#include "schema/log_classes.hpp"
#include "storage/row.hpp"

namespace crmd::query {

namespace {

bool IsHistory(const schema::ClassSchema& cls) { return cls.name == schema::kTimelineClass; }

bool ReadsHistory(const Expr& e) {
  if (e.sub && ((e.sub->cls && IsHistory(*e.sub->cls)) || (e.sub->where && ReadsHistory(*e.sub->where)))) return true;
  for (const auto& child : e.children)
    if (ReadsHistory(child)) return true;
  return false;
}

bool MayGet(const auth::Identity& identity, const schema::Snapshot& snapshot, std::string_view class_name) {
  const schema::ClassSchema* cls = snapshot.Find(class_name);
  return cls && auth::Authorize(identity, auth::Operation::kGet, class_name, cls).ok();
}

}  // namespace

void LimitToReadable(const auth::Identity& identity, const schema::Snapshot& snapshot, const schema::ClassSchema& cls,
                     Query& query) {
  if (identity.SkipsAcl()) return;
  query.readable_by = identity.Principals();
  if (!IsHistory(cls) && !(query.where && ReadsHistory(*query.where))) return;
  std::vector<std::string> classes;
  for (const auto& [name, other] : snapshot.classes())
    if (MayGet(identity, snapshot, name)) classes.push_back(name);
  query.history_of = std::move(classes);
}

ReadableRows::ReadableRows(const auth::Identity& identity, const schema::Snapshot& snapshot)
    : identity_(identity), snapshot_(snapshot) {
  if (!identity.SkipsAcl()) principals_ = identity.Principals();
}

bool ReadableRows::Allows(const schema::ClassSchema& cls, const storage::Row& row) const {
  if (identity_.SkipsAcl()) return true;
  if (!auth::AclGrants(row.acl, principals_, false)) return false;
  if (!IsHistory(cls)) return true;
  const storage::Cell of = storage::CellOf(cls, row, "objectClass");
  const auto* name = std::get_if<std::string>(&of);
  return name && MayGet(identity_, snapshot_, *name);
}

}  // namespace crmd::query
