// A class definition as a store keeps it (`_crmd_schema.definition`, JSON text) read into the
// ClassSchema every request consults.
//
// Opening an application reads all of its definitions, and most applications start from the same
// product base: 111 classes whose texts are the same in every such store. Each distinct text is
// read once per process and its one immutable ClassSchema shared by every store that has it, so a
// cold open skips the JSON work (a fifth of its CPU) and ten thousand open stores hold one copy of
// the product base's classes instead of one each.
// Thread-safe.
#pragma once

#include <memory>
#include <string_view>

#include "schema/class_schema.hpp"

namespace crmd::storage {

using ClassDefinition = std::shared_ptr<const schema::ClassSchema>;

// The class `text` defines; StorageError naming `store` when it is unreadable or invalid.
ClassDefinition ReadClassDefinition(std::string_view text, std::string_view store);

}  // namespace crmd::storage
