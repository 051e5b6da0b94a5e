// The request context every service function receives: the application, who is calling, request
// facts for logs, and where its writes go. Transport-agnostic: batch items and (later) MCP tools
// build one too.
#pragma once

#include <memory>
#include <string>

#include "auth/identity.hpp"

namespace crmd::app {
class Application;
class WriteUnit;
}
namespace crmd::storage {
class WriteGroup;
}

namespace crmd::auth {

struct AppCredentials;  // auth/registry.hpp

struct Context {
  std::shared_ptr<app::Application> app;
  Identity identity;
  std::string remote_ip;
  // The client's installation (its installation-id header): kept with the sessions it opens.
  std::string installation_id;
  // The request's Referer header: a session user's writes name it in their _Timeline rows.
  std::string referer;
  // The write unit the next write joins (a batch's items join the batch's), or null: the next
  // write begins one. app::RunWrite sets it for as long as the outermost write runs.
  app::WriteUnit* unit = nullptr;
  // The write group when the request runs as a queued job or a batch item: outermost units begin
  // in it.
  storage::WriteGroup* queued = nullptr;
  // The application's registry entry (its deployed functions), when the caller knows it.
  std::shared_ptr<const AppCredentials> credentials;
  // Set while a trigger's action writes (triggers/): the level of its writes in the chain (1 for
  // an action fired by a client's write), its trigger, and the chain's first trigger.
  int trigger_level = 0;
  std::string trigger_id;
  std::string source_trigger;
  // The id of the write that started the trigger chain (app::FanOut); empty: this write starts one.
  std::string trigger_root;
  // MCP's Create-Many with a master connection (spec §4.10): its creates fire no trigger and
  // write no `_Timeline` row. Set only by that tool, only for a master identity.
  bool skip_triggers = false;
  bool skip_timeline = false;
};

}  // namespace crmd::auth
