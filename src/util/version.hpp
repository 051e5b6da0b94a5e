// crmd's version: `<release>+<commit>`, e.g. `0.3.0+f46977a1b2c3` (cmake/version.cmake writes its
// definition at each build; the release is project(VERSION) in CMakeLists.txt). `crmd --version`
// prints it and the MCP server names itself with it.
#pragma once

#include <string_view>

namespace crmd {

std::string_view Version();

}  // namespace crmd
