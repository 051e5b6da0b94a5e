// The file routes as MCP's file tools reach them (mcp::FileDoor): an upload through the same
// handler as `POST /<prefix>/files/<name>` (the content check included), and a file read through
// the same download rights as a GET of its address. A tool reads only files of its own application.
#pragma once

#include <string_view>

#include "mcp/tool.hpp"

namespace crmd::api {

// `prefix`: the record API's path prefix, as the upload route is addressed.
mcp::FileDoor McpFileDoor(std::string prefix);

}  // namespace crmd::api
