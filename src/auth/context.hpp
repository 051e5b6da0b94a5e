// The request context every service function receives: the application, who is calling, and
// request facts for logs. Transport-agnostic: batch items and (later) MCP tools build one too.
#pragma once

#include <memory>
#include <string>

#include "auth/identity.hpp"

namespace crmd::app {
class Application;
}

namespace crmd::auth {

struct Context {
  std::shared_ptr<app::Application> app;
  Identity identity;
  std::string remote_ip;
};

}  // namespace crmd::auth
