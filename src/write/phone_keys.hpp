// Contacts found by phone (spec §4.9: local and international forms of one number are one
// contact). Accounts.PhoneNumber has an index on phone::Key of its value (the last digits, which
// every written form of a number shares; SQLite keeps it as rows are written). A lookup reads the
// few contacts of its key and keeps those whose number is the same in the application's region
// (libphonenumber, ~20 us a number: too dear for every write, cheap for a few candidates).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "app/application.hpp"
#include "schema/class_schema.hpp"
#include "storage/write_transaction.hpp"

namespace crmd::write {

inline constexpr std::string_view kContactClass = "Accounts";
inline constexpr std::string_view kContactPhoneField = "PhoneNumber";

// Makes the phone-key index of the contacts when they have a phone field and it is missing (an
// application that opens, or whose Accounts gained PhoneNumber since).
void EnsurePhoneIndex(app::Application& app);

// The contacts whose phone is `raw` in any form, read in `region`, the oldest first; none when
// `raw` is no number.
std::vector<std::string> ContactsByPhone(storage::WriteTransaction& txn, const schema::Snapshot& snapshot,
                                         std::string_view raw, std::string_view region, std::size_t limit);

}  // namespace crmd::write
