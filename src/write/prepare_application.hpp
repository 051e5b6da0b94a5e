// What an application needs of its store before its first request, run as it is opened (by
// app::Applications), for a new application and for one an older release created alike:
//   - `_User` has the fields this release writes, and the system user exists: the `_User` that
//     stands for master-key and API-key writes (spec §2.6), without a password, that cannot log
//     in and whose deletion is refused;
//   - `_Timeline`, where it exists, has the shape crmd writes (schema/log_classes.hpp) and the
//     index columns every class's timeline names.
// One exclusive write unit, and none at all when nothing is missing.
#pragma once

#include "app/application.hpp"

namespace crmd::write {

void PrepareApplication(app::Application& app);

}  // namespace crmd::write
