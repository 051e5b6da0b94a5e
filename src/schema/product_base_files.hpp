// The product base every application starts from (share/product-base, compiled in):
//   VERSION                      the base's version, one line
//   classes/<Class>.json         a class definition: Parse's schema shape plus `timeline`
//   rows/<Class>.json            seed rows in the record API's wire format
// `_User`, `_Session` and `_Role` are defined in code (schema/system_classes) and not listed.
#pragma once

#include <vector>

#include "util/embedded_file.hpp"

namespace crmd::schema {

using EmbeddedFile = util::EmbeddedFile;  // paths relative to share/product-base

const std::vector<util::EmbeddedFile>& ProductBaseFiles();

}  // namespace crmd::schema
