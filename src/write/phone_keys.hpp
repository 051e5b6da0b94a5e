// Contacts found by phone (spec §4.9: local and international forms of one number are one
// contact): every write of an Accounts row keeps the normalised form of its PhoneNumber as the
// row's phone key (storage's indexed side table), and an application's rows written before keys
// existed, or under another region, get theirs as it opens.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/application.hpp"
#include "schema/class_schema.hpp"
#include "storage/database.hpp"

namespace crmd::write {

inline constexpr std::string_view kContactClass = "Accounts";
inline constexpr std::string_view kContactPhoneField = "PhoneNumber";

// After a row of `cls` was written with `columns` and `row`: its phone key follows its phone.
void KeepPhoneKey(storage::WriteTransaction& txn, const schema::ClassSchema& cls, std::string_view region,
                  const std::vector<std::string>& columns, const storage::Row& row);

// The contacts whose phone is `raw` in any form, oldest first; none when `raw` is no number.
std::vector<std::string> ContactsByPhone(storage::WriteTransaction& txn, std::string_view raw,
                                         std::string_view region, std::size_t limit);

// Fills the phone keys of every contact when the store has none for `region` yet.
void FillPhoneKeys(app::Application& app, std::string_view region);

}  // namespace crmd::write
