// A trigger activation: what a firing stores in the application's outbox (storage::OutboxEntry)
// in the transaction of the write that fired it, and what the trigger runner works through, one
// action per unit of work, after that commit. Payload, as JSON text:
//
//   {"class", "trigger", "event", "object": the record's id, "record": the record as the record
//    API returns it (before a delete, after any other write), "step": its level in the chain
//    (1 for a client's write), "source": the chain's first trigger, "root": the id of the chain's
//    first write (app::FanOut), "actions": [action definitions, as stored], "done": how many of
//    them ran}
#pragma once

#include <boost/json.hpp>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/result.hpp"

namespace crmd::triggers {

// The runner's queues: actions that run as soon as their write is durable, and the application's
// function queue (`server-side-code` with `useQueue`), one call at a time.
inline constexpr int kLaneNow = 0;
inline constexpr int kLaneQueue = 1;

// Levels a chain of triggers may go (spec §6.1): the step past it is blocked.
inline constexpr int kMaxChainDepth = 3;
// Trigger actions one write may start, its whole chain at every level counted (issue 31 #18): a
// notification trigger on a class that a function fills by the hundred fits; triggers of 20
// actions three levels deep (8,420 records from one anonymous call) do not. Past it, a firing
// runs no action and each of its actions' `_syslogTriggers` rows says so (FanOutText).
inline constexpr std::int64_t kMaxActionsPerWrite = 1'000;

struct Activation {
  std::string class_name;
  std::string trigger_id;
  std::string event;
  std::string object_id;
  boost::json::object record;
  int step = 1;
  std::string source;
  std::string root;  // empty in activations stored before issue 31: their writes start chains
  boost::json::array actions;
  std::size_t done = 0;

  std::string Serialize() const;
  static Result<Activation> Parse(std::string_view payload);
};

// An activation's parts as a firing has them, the record and the actions already JSON text: the
// payload Serialize would write, without building (and copying) the record's tree again.
struct PayloadParts {
  std::string_view class_name, trigger_id, event, object_id;
  std::string_view record_json;   // a JSON object
  int step = 1;
  std::string_view source, root;  // root: empty, none
  std::string_view actions_json;  // a JSON array
  std::size_t done = 0;
};
std::string PayloadText(const PayloadParts& parts);

// `_syslogTriggers.error` of an action whose step is past kMaxChainDepth (spec §6.1, to the letter).
std::string BlockedText(std::string_view source_trigger);
// `_syslogTriggers.error` of an action whose chain is past kMaxActionsPerWrite.
std::string FanOutText(std::string_view source_trigger);

}  // namespace crmd::triggers
