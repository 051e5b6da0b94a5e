#include "storage/sqlite/phone_key.hpp"

#include <string_view>

#include "util/phone.hpp"

namespace crmd::storage::sqlite {

namespace {
void PhoneKey(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
    sqlite3_result_null(ctx);
    return;
  }
  const auto* text = reinterpret_cast<const char*>(sqlite3_value_text(argv[0]));
  auto key = phone::Key(std::string_view(text, static_cast<std::size_t>(sqlite3_value_bytes(argv[0]))));
  if (!key) {
    sqlite3_result_null(ctx);
    return;
  }
  sqlite3_result_text(ctx, key->data(), static_cast<int>(key->size()), SQLITE_TRANSIENT);
}
}  // namespace

void RegisterPhoneKey(sqlite3* db) {
  sqlite3_create_function_v2(db, "crmd_phone_key", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nullptr,
                             PhoneKey, nullptr, nullptr, nullptr);
}

}  // namespace crmd::storage::sqlite
