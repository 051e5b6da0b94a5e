// The product base every application starts from (share/product-base, compiled in):
//   VERSION                      the base's version, one line
//   classes/<Class>.json         a class definition: Parse's schema shape plus `timeline`
//   rows/<Class>.json            seed rows in the record API's wire format
// `_User`, `_Session` and `_Role` are defined in code (schema/system_classes) and not listed.
#pragma once

#include <string_view>
#include <vector>

namespace crmd::schema {

struct EmbeddedFile {
  std::string_view path;     // relative to share/product-base
  std::string_view content;
};

const std::vector<EmbeddedFile>& ProductBaseFiles();

}  // namespace crmd::schema
