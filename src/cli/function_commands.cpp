// `crmd function deploy|list|remove`: the operator's Lua functions (docs/FUNCTIONS.md).
#include "cli/commands.hpp"

#include <fstream>
#include <iterator>

#include "functions/lua_function.hpp"
#include "storage/registry_store.hpp"
#include "util/time.hpp"
#include "cli/admin.hpp"
#include "util/json.hpp"

namespace crmd::cli {

namespace json = boost::json;

namespace {

constexpr std::size_t kMaxFunctionBytes = 1u << 20;  // source of one deployed function

// Spec §4.9: the form functions' names are crmd's own.
bool IsBuiltinFunction(std::string_view name) {
  return name == "getlead" || name == "web2table" || name == "web2case" || name == "web2sale";
}

}  // namespace

int DeployFunction(const AdminArgs& args) {
  const std::string &data = args.data, &app_id = args.app_id, &name = args.name, &file = args.file;
  if (!IsValidKeyName(name)) return Fail("--name must be 1-64 of [A-Za-z0-9._-]");
  if (IsBuiltinFunction(name)) return Fail(name + " is a built-in form function and cannot be replaced");
  std::ifstream in(file, std::ios::binary);
  if (!in) return Fail("cannot read " + file);
  std::string code((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (code.size() > kMaxFunctionBytes) return Fail("a function may hold at most 1 MiB of source");
  if (auto wrong = functions::CheckLua(name, code)) return Fail("the function does not compile: " + *wrong);
  auto registry_store = OpenRegistryOf(data);
  auto& store = *registry_store;
  // A running server sees it within a second.
  if (store.DeployFunction(app_id, {name, code, timeutil::NowIso()}) != storage::RegistryChange::kDone)
    return Fail("no application " + app_id);
  Print(json::object{{"appId", app_id}, {"deployed", name}, {"bytes", static_cast<std::int64_t>(code.size())}});
  return 0;
}

int ListFunctions(const AdminArgs& args) {
  const std::string &data = args.data, &app_id = args.app_id;
  auto registry_store = OpenRegistryOf(data);
  auto& store = *registry_store;
  auto app = store.Load(app_id);
  if (!app) return Fail("no application " + app_id);
  json::array list;
  for (const auto& f : app->functions)
    list.push_back(json::object{{"name", f.name}, {"deployedAt", f.deployed_at}, {"bytes", static_cast<std::int64_t>(f.code.size())}});
  Print(json::object{{"appId", app_id}, {"functions", std::move(list)}});
  return 0;
}

int RemoveFunction(const AdminArgs& args) {
  const std::string &data = args.data, &app_id = args.app_id, &name = args.name;
  auto registry_store = OpenRegistryOf(data);
  auto& store = *registry_store;
  switch (store.RemoveFunction(app_id, name)) {
    case storage::RegistryChange::kNoSuchApp: return Fail("no application " + app_id);
    case storage::RegistryChange::kNoSuchKey: return Fail("no function named " + name);
    default: break;
  }
  Print(json::object{{"appId", app_id}, {"removed", name}});
  return 0;
}

}  // namespace crmd::cli
