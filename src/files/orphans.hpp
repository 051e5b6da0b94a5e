// Orphans (spec §3.3): files uploaded and never attached, or no longer attached, which no query can
// find. `crmd files gc` removes those older than a given age: younger ones may be an upload whose
// attaching write is still to come.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "app/application.hpp"

namespace crmd::files {

struct Collected {
  std::vector<std::string> removed;  // stored names
  std::size_t kept = 0;              // files still referenced, or too young
};

// Removes the files of `app` that no File or PrivateFile value of any record names and that were
// last written more than `min_age` ago. Reads every record of the classes with file fields.
Collected RemoveOrphans(app::Application& app, std::chrono::seconds min_age);

}  // namespace crmd::files
