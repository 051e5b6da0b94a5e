// LiveQuery as server-sent events (issue 36, docs/LIVEQUERY.md), for clients that are not Parse
// SDKs: `GET /<prefix>/live?ticket=…&className=…[&where=…][&keys=a,b][&watch=a,b]` opens one
// subscription under the credentials the single-use ticket stands for (api/live_tickets.hpp).
// Each LiveQuery message (`subscribed`, the events, `error`) is one `data:` event of the same
// JSON as over the WebSocket.
#pragma once

#include "api/live_hub.hpp"
#include "api/live_tickets.hpp"
#include "api/message.hpp"
#include "api/target.hpp"

namespace crmd::api {

// The stream's answer (Response::event_stream), or the refusal: 403 for a ticket unknown, used or
// expired; 400 for a missing className or a `where` that is no JSON object; 119 for a class not
// opted in.
Response LiveEvents(LiveHub& hub, LiveTickets& tickets, const Target& target);

}  // namespace crmd::api
