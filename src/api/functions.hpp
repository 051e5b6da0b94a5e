// `POST /functions/{appId}/{fn}` (spec §4.9): the public form functions and the operator's Lua
// functions. Outside the prefix, with the application id header alone; answers and errors are
// `{"error": ...}` without a code (§7).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "api/message.hpp"
#include "auth/context.hpp"
#include "functions/lua_function.hpp"

namespace crmd::api {

struct FunctionCall {
  std::string_view name;
  // The deployed function of that name, if any (a form's name always runs the form).
  std::shared_ptr<const std::string> code;
  functions::LuaLimits limits;
  // Re-enters the record API below the prefix, with the call's context (its identity and unit):
  // the status and the body as the handler wrote it.
  std::function<std::pair<int, std::string>(auth::Context& ctx, std::string_view method, const std::string& target,
                                            const boost::json::value* body)>
      dispatch;
};

// `GET /<prefix>/functions` (keys only, issue 34): the functions `POST /functions/{appId}/{fn}`
// runs for the application, `{"results": [{"name", "kind": "form"|"lua", "bytes"?}]}`, by name.
Response ListFunctions(const auth::AppCredentials& credentials);

// `ctx` is the caller's, for the application the header and the path both name.
Response HandleFunction(const Request& request, const FunctionCall& call, auth::Context& ctx);

// Runs the deployed function of `call` (its code set) with `body`, and `record` as its context
// when a trigger calls it: one write unit for all it writes (ctx's, when ctx has one), as the
// system identity.
Result<boost::json::value> RunDeployed(const FunctionCall& call, const boost::json::object& body,
                                       const boost::json::value* record, auth::Context& ctx);

}  // namespace crmd::api
