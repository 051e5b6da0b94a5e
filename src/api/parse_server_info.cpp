#include "api/parse_server_info.hpp"

#include <string>

#include <boost/json.hpp>

#include "util/version.hpp"

namespace crmd::api {

namespace {

boost::json::object All(bool on, std::initializer_list<const char*> names) {
  boost::json::object o;
  for (const char* name : names) o[name] = on;
  return o;
}

// `0.3.0+f46977a` as semver build metadata: `crmd.0.3.0.f46977a` (dots only, no second `+`).
std::string BuildMetadata() {
  std::string out = "crmd.";
  for (char c : Version()) out += (c == '+') ? '.' : c;
  return out;
}

}  // namespace

Response HandleParseServerInfo() {
  boost::json::object schemas = All(true, {"addField", "removeField", "addClass", "removeClass", "clearAllDataFromClass",
                                           "editClassLevelPermissions"});
  // Not crmd's: a class exported as a file, and permissions by pointer field (readUserFields).
  schemas["exportClass"] = false;
  schemas["editPointerPermissions"] = false;
  boost::json::object features{
      {"globalConfig", All(true, {"create", "read", "update", "delete"})},
      {"hooks", All(false, {"create", "read", "update", "delete"})},
      {"cloudCode", All(false, {"jobs"})},
      {"logs", All(false, {"level", "size", "order", "until", "from"})},
      {"push", All(false, {"immediatePush", "scheduledPush", "storedPushData", "pushAudiences", "localization"})},
      {"schemas", std::move(schemas)},
  };
  return JsonResponse(200, boost::json::object{{"features", std::move(features)},
                                               {"parseServerVersion", std::string(kParseApiRelease) + "+" + BuildMetadata()}});
}

}  // namespace crmd::api
