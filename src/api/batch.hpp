// `POST /batch` (spec §4.4): several writes in one request, not a transaction. Each item
// re-enters the router like a single call (same permissions, ACLs and write pipeline); each item
// is a write unit of its own in one write group, so a batch costs one fsync (two around an item
// that grows the schema, which runs alone) and a failing item leaves the others in place.
#pragma once

#include <functional>

#include "api/message.hpp"
#include "auth/context.hpp"

namespace crmd::api {

// Items beyond this are refused whole: far above the 1,000 the spec says pass.
inline constexpr std::size_t kMaxBatchItems = 10000;

using Dispatch = std::function<Response(const Request&)>;

// `prefix` is the path prefix (`core`); `dispatch` routes one item as a request of its own.
Response HandleBatch(const Request& request, auth::Context& ctx, const std::string& prefix,
                     const Dispatch& dispatch);

}  // namespace crmd::api
