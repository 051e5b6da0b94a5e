// Checks a tool call's `arguments` against the tool's `inputSchema` (the JSON Schema subset the
// catalogue uses, which every MCP client and model provider accepts): `type` (one name or a list),
// `properties`, `required`, `additionalProperties: false`, `enum`, `minimum`, `maximum`,
// `minLength`, `maxLength`, `items`, `minItems`, `maxItems`. The schema a client lists is the one
// enforced, so a model that reads it is never surprised.
#pragma once

#include <boost/json.hpp>
#include <optional>
#include <string>

namespace crmd::mcp {

// The first way `arguments` breaks `schema`, worded for a model to correct it ("limit must be at
// most 2000", "data[2] must be an object"); nullopt when it conforms.
std::optional<std::string> CheckArguments(const boost::json::object& schema, const boost::json::value& arguments);

}  // namespace crmd::mcp
