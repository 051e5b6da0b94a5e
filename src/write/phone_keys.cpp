#include "write/phone_keys.hpp"

#include <limits>

#include "util/phone.hpp"

namespace crmd::write {

namespace {
std::optional<std::string> KeyOf(const storage::Cell& cell, std::string_view region) {
  const auto* text = std::get_if<std::string>(&cell);
  return text ? phone::Normalize(*text, region) : std::nullopt;
}
}  // namespace

void KeepPhoneKey(storage::WriteTransaction& txn, const schema::ClassSchema& cls, std::string_view region,
                  const std::vector<std::string>& columns, const storage::Row& row) {
  if (cls.name != kContactClass) return;
  for (std::size_t i = 0; i < columns.size() && i < row.cells.size(); ++i) {
    if (columns[i] != kContactPhoneField) continue;
    txn.SetPhoneKey(cls.name, row.object_id, KeyOf(row.cells[i], region));
    return;
  }
}

std::vector<std::string> ContactsByPhone(storage::WriteTransaction& txn, std::string_view raw,
                                         std::string_view region, std::size_t limit) {
  auto key = phone::Normalize(raw, region);
  if (!key) return {};
  return txn.FindByPhoneKey(kContactClass, *key, limit);
}

void FillPhoneKeys(app::Application& app, std::string_view region) {
  auto snapshot = app.schema();
  const auto* contacts = snapshot->Find(kContactClass);
  if (!contacts || !contacts->FindField(kContactPhoneField)) return;
  if (app.db().PhoneKeysFor(kContactClass, region)) return;  // most opens: no write to find out
  auto txn = app.db().BeginWrite(/*exclusive=*/true);
  if (txn->PhoneKeysFor(kContactClass, region)) return;  // another open filled them meanwhile
  query::Query all;
  all.limit = std::numeric_limits<std::int64_t>::max();
  std::vector<std::pair<std::string, std::optional<std::string>>> keys;
  txn->Find(*contacts, all, [&](storage::Row& row) {
    keys.emplace_back(row.object_id, KeyOf(storage::CellOf(*contacts, row, kContactPhoneField), region));
    return true;
  });
  for (const auto& [id, key] : keys) txn->SetPhoneKey(kContactClass, id, key);
  txn->MarkPhoneKeys(kContactClass, region);
  txn->Commit();
}

}  // namespace crmd::write
