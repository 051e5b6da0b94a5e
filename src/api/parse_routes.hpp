// Routes Parse's SDKs call that the spec's `/core` does not have, answered under `--prefix parse`
// only (docs/COMPATIBILITY.md): `config` (Parse.Config), `purge/{Class}` (Parse.Schema's purge)
// and `sessions/me` (Parse.Session.current). Each re-enters the record API through `send`, with the caller's own credentials: the
// `Config` class's permissions decide who reads and writes the configuration, and a purge deletes
// record by record, with the pointer rule, history and triggers of any delete.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <boost/json/value.hpp>

#include "api/message.hpp"
#include "api/target.hpp"
#include "auth/context.hpp"

namespace crmd::api {

// A request below the prefix (`/classes/...`) for the caller: its status and JSON answer.
using SendToApi =
    std::function<std::pair<int, boost::json::value>(std::string_view method, const std::string& target,
                                                     const boost::json::value* body)>;

// `GET /parse/config` answers `{"params":{...}}`: each `Config` row `{Name, Value}` is the param
// `Name`, whose value is `Value[Name]` for a flag row of the spec's shape (§4.9) and `Value`
// otherwise. `PUT /parse/config {"params":{...}, "masterKeyOnly":{...}}` (master or API key) writes
// each param as such a row, readable by the keys alone when `masterKeyOnly` says so, and
// `{"__op":"Delete"}` removes it; it answers `{"result":true}`.
Response HandleParseConfig(const Request& request, auth::Context& ctx, const SendToApi& send);

// Records a purge deletes in one call at most: a larger class is refused before anything is
// deleted (delete it in batches), so no purge holds a writer thread for long or stops half-way.
inline constexpr int kMaxPurge = 10'000;

// `DELETE /parse/purge/{Class}` (master or API key): deletes every record of the class; `{}`.
Response HandleParsePurge(const std::string& class_name, auth::Context& ctx, const SendToApi& send);

// `GET /parse/sessions/me` (Parse.Session.current()): the caller's own `_Session` row, read as the
// caller, with the token the caller sent (the stored one is a hash); 209 without a session.
Response HandleParseSessionMe(auth::Context& ctx, std::optional<std::string_view> token, const SendToApi& send);

}  // namespace crmd::api
