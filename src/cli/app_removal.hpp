// Taking an application away for good (`crmd app delete`, `crmd app import --replace`): its
// registry entry first, so that every running server stops serving it within a poll of its
// registry (auth::Registry::kPollInterval) and lets go of its store; then, once they had the time
// to see it, its store and its folder (files, public copies, private marks, mail outbox).
//
// A request a server was running at that moment may fail (500): the application is going away.
// Not thread-safe; the command line's.
#pragma once

#include <string>

namespace crmd::cli {

// False when the registry has no such application (nothing is touched then).
bool RemoveApplication(const std::string& data_dir, const std::string& app_id);

}  // namespace crmd::cli
