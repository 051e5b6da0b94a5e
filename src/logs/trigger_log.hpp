// `_syslogTriggers` (spec §2.6, §6.1; docs/TRIGGERS.md): a row when a trigger fires (actionId
// null) and a row for each of its actions, written in the write unit whose outcome it records, so
// that the row and what it says happened commit together or not at all.
#pragma once

#include <optional>
#include <string>

#include "app/write_unit.hpp"
#include "util/result.hpp"

namespace crmd::logs {

struct TriggerRun {
  std::string trigger_id;
  std::optional<std::string> action_id;  // null on the row of the firing
  std::string event;                     // create | update | delete
  std::string object_id;                 // the triggering record's
  std::string data;                      // JSON text
  std::optional<std::string> error;      // JSON text, or the chain's blocked text
};

// Writes the row in `unit`. A store without `_syslogTriggers` gets it: a schema change, so the
// unit must be exclusive for it (Restarting() otherwise).
Status RecordTriggerRun(app::WriteUnit& unit, const TriggerRun& run);

}  // namespace crmd::logs
