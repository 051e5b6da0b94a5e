// An application's store as its two implementations (sqlite/, postgres/) provide it: the record
// store, the outbox of trigger activations and the store's administration in one object. Who owns
// a store (app::Application, storage::Stores, the command line) holds a Database; everyone else
// asks for the narrowest of the three it uses:
//   - RecordStore (record_store.hpp): schema, writes, write groups and reads of records;
//   - Outbox (outbox.hpp): the trigger runner's reads and claims of committed activations;
//   - StoreAdmin (store_admin.hpp): integrity checks, layout reloads, the phone index.
// Thread-safety as each of them states: shared by all request threads.
#pragma once

#include "storage/durability.hpp"
#include "storage/outbox.hpp"
#include "storage/record_store.hpp"
#include "storage/store_admin.hpp"

namespace crmd::storage {

class Database : public RecordStore, public Outbox, public StoreAdmin {};

}  // namespace crmd::storage
