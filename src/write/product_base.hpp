// Loads the product base (schema/product_base_files) into a new application: every class in one
// transaction, then every seed row through the write pipeline (types checked like any write) in
// one batch. Called by `crmd app create` before the application is registered, so no request
// ever sees a half-loaded application.
#pragma once

#include <string>

#include "app/application.hpp"

namespace crmd::write {

// Throws std::runtime_error naming the file when the base is inconsistent (a build defect).
void LoadProductBase(app::Application& app);

// The version line of the embedded base.
std::string ProductBaseVersion();

}  // namespace crmd::write
