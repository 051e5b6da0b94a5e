// The public form functions of spec §4.9 (`POST /functions/{appId}/{fn}`): a landing page posts a
// form with the application id alone, and the function writes with master rights through the
// record API's write pipeline, in one write unit (a call that fails leaves nothing behind).
#pragma once

#include <boost/json.hpp>
#include <optional>
#include <string_view>

#include "auth/context.hpp"
#include "util/result.hpp"

namespace crmd::functions {

// Whether `name` is one of the form functions (short writes: they may run on the application's
// write queue, where an operator's function, which may run for its whole budget, may not).
bool IsForm(std::string_view name);

// Runs form `name` on `body` for the application of `ctx`, whose identity it replaces with the
// system's (writes named `Master`, Referer `server-side-code:<name>`). nullopt: no form of that
// name. The answer's errors are spec §7's form errors (`{"error": ...}` without a code).
std::optional<Result<boost::json::object>> RunForm(auth::Context& ctx, std::string_view name,
                                                   const boost::json::object& body);

}  // namespace crmd::functions
