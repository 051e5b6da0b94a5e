// A file compiled into the binary by cmake/embed_files.cmake (the product base, the console):
// views into static storage, valid for the process's life.
#pragma once

#include <string_view>

namespace crmd::util {

struct EmbeddedFile {
  std::string_view path;     // relative to the embedded folder, `/`-separated
  std::string_view content;
};

}  // namespace crmd::util
