#include "write/phone_keys.hpp"

#include <algorithm>
#include <tuple>

#include "util/phone.hpp"

namespace crmd::write {

namespace {
// Contacts sharing a key that one lookup checks: different numbers rarely share their last 9
// digits, so more than a few means one number written many times over.
constexpr std::size_t kCandidates = 64;
}  // namespace

void EnsurePhoneIndex(app::Application& app) {
  auto snapshot = app.schema();
  if (app.PhoneIndexCheckedFor(snapshot)) return;  // a form call per request: no query
  const auto* contacts = snapshot->Find(kContactClass);
  if (contacts && contacts->FindField(kContactPhoneField)) app.store_admin().EnsurePhoneKeyIndex(*contacts, kContactPhoneField);
  app.SetPhoneIndexCheckedFor(std::move(snapshot));
}

std::vector<std::string> ContactsByPhone(storage::WriteTransaction& txn, const schema::Snapshot& snapshot,
                                         std::string_view raw, std::string_view region, std::size_t limit) {
  const auto* contacts = snapshot.Find(kContactClass);
  if (!contacts || !contacts->FindField(kContactPhoneField)) return {};
  const auto key = phone::Key(raw);
  if (!key) return {};
  auto candidates = txn.FindByPhoneKey(*contacts, kContactPhoneField, *key, kCandidates);
  if (candidates.empty()) return {};  // the usual answer for a new number, without libphonenumber
  const auto wanted = phone::Normalize(raw, region);
  if (!wanted) return {};
  // The oldest first, and no further than needed: a number sent many times has many candidates.
  std::sort(candidates.begin(), candidates.end(), [](const storage::Row& a, const storage::Row& b) {
    return std::tie(a.created_at, a.object_id) < std::tie(b.created_at, b.object_id);
  });
  std::vector<std::string> ids;
  for (auto& row : candidates) {
    const auto* text = row.cells.empty() ? nullptr : std::get_if<std::string>(&row.cells[0]);
    if (!text || phone::Normalize(*text, region) != wanted) continue;  // the same digits, another number
    ids.push_back(std::move(row.object_id));
    if (ids.size() == limit) break;
  }
  return ids;
}

}  // namespace crmd::write
