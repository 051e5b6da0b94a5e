// The administration of an application's store: checks and upkeep that no client request's
// read or write needs, asked for by the command line, the application's runtime and the phone
// index's upkeep (write/phone_keys).
//
// Thread-safe, like the store that implements it.
#pragma once

#include <string_view>

#include "schema/class_schema.hpp"

namespace crmd::storage {

class StoreAdmin {
 public:
  virtual ~StoreAdmin() = default;

  // True when the store's own consistency check passes.
  virtual bool CheckIntegrity() = 0;

  // Another process changed the application's tables (Stores::Watch): what the store keeps of
  // them is read again.
  virtual void ForgetLayout() {}

  // Makes the index on phone::Key of `field` of `cls` unless it exists (spec §4.9: contacts are
  // found by phone in any form). Returns whether it had to (an exclusive write; checked by a read).
  virtual bool EnsurePhoneKeyIndex(const schema::ClassSchema& cls, std::string_view field) = 0;
};

}  // namespace crmd::storage
