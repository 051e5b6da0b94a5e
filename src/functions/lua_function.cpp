#include "functions/lua_function.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <memory>

#include "functions/lua_run.hpp"
#include "metrics/metrics.hpp"
#include "util/errors.hpp"

namespace crmd::functions {

namespace json = boost::json;

namespace {

void* Allocate(void* ud, void* ptr, std::size_t osize, std::size_t nsize) {
  auto* run = static_cast<LuaRun*>(ud);
  const std::size_t old = ptr ? osize : 0;  // without a block, osize is the kind of object
  if (nsize == 0) {
    std::free(ptr);
    run->memory_used -= old;
    return nullptr;
  }
  if (nsize > old && run->memory_used - old + nsize > run->memory_limit) {
    run->out_of_memory = true;
    return nullptr;  // Lua raises its memory error
  }
  void* grown = std::realloc(ptr, nsize);
  if (grown) run->memory_used = run->memory_used - old + nsize;
  return grown;
}

ApiError Failed(std::string_view name, std::string_view why) {
  return ApiError{500, 0, fmt::format("function {} {}", name, why), ErrorBody::kErrorOnly};
}

struct StateCloser {
  void operator()(lua_State* L) const { lua_close(L); }
};

}  // namespace

std::optional<std::string> CheckLua(std::string_view name, std::string_view code) {
  LuaRun run{.memory_limit = 64u << 20, .budget = 0, .deadline = LuaClock::now()};
  std::unique_ptr<lua_State, StateCloser> L(lua_newstate(Allocate, &run));
  if (!L) return "out of memory";
  const std::string chunk = std::string("=").append(name);
  if (luaL_loadbufferx(L.get(), code.data(), code.size(), chunk.c_str(), "t") == LUA_OK) return std::nullopt;
  const char* message = lua_tostring(L.get(), -1);
  return message ? std::string(message) : std::string("it does not compile");
}

Result<json::value> RunLua(std::string_view name, std::string_view code, const json::object& body,
                           const json::value* record, const LuaLimits& limits, const LuaHost& host) {
  LuaRun run{.memory_limit = limits.memory_bytes, .budget = limits.instructions, .deadline = LuaClock::now() + limits.time};
  run.host = &host;
  std::unique_ptr<lua_State, StateCloser> state(lua_newstate(Allocate, &run));
  if (!state) {
    metrics::CountFunctionCall(metrics::FunctionResult::kFailed);
    return Failed(name, "could not start");
  }
  lua_State* L = state.get();
  *static_cast<LuaRun**>(lua_getextraspace(L)) = &run;
  lua_sethook(L, LimitsHook, LUA_MASKCOUNT | LUA_MASKCALL, kHookEvery);

  // Everything that can raise a Lua error runs protected, from here to the answer's conversion.
  struct Call {
    std::string_view name, code;
    const json::object* body;
    const json::value* record;
    json::value answer;
  } call{name, code, &body, record, nullptr};
  lua_pushcfunction(L, [](lua_State* L) -> int {
    auto* c = static_cast<Call*>(lua_touserdata(L, 1));
    OpenSandbox(L);
    lua_createtable(L, 0, 2);
    PushJson(L, *c->body);
    lua_setfield(L, -2, "body");
    if (c->record) {
      PushJson(L, *c->record);
      lua_setfield(L, -2, "record");
    }
    lua_setglobal(L, "request");
    const std::string chunk = std::string("=").append(c->name);
    if (luaL_loadbufferx(L, c->code.data(), c->code.size(), chunk.c_str(), "t") != LUA_OK) lua_error(L);
    lua_call(L, 0, 1);
    c->answer = lua_isnil(L, -1) ? json::value(json::object()) : PullJson(L, -1);
    return 0;
  });
  lua_pushlightuserdata(L, &call);
  const int status = lua_pcall(L, 1, 0, 0);
  if (status == LUA_OK) {
    metrics::CountFunctionCall(metrics::FunctionResult::kOk);
    return std::move(call.answer);
  }

  if (run.fault) {
    metrics::CountFunctionCall(metrics::FunctionResult::kFailed);
    std::rethrow_exception(run.fault);
  }
  if (run.out_of_time) {
    metrics::CountFunctionCall(metrics::FunctionResult::kTimeout);
    host.log("time limit exceeded");
    return Failed(name, "ran past its time limit");
  }
  if (run.out_of_budget) {
    metrics::CountFunctionCall(metrics::FunctionResult::kInstructions);
    host.log("instruction budget exceeded");
    return Failed(name, "ran past its instruction budget");
  }
  if (status == LUA_ERRMEM || run.out_of_memory) {
    metrics::CountFunctionCall(metrics::FunctionResult::kOutOfMemory);
    host.log("memory limit exceeded");
    return Failed(name, "ran out of memory");
  }
  metrics::CountFunctionCall(metrics::FunctionResult::kFailed);
  // error({status=..., error=...}), or a failed crm call: that status and message. Read raw: the
  // error value is the caller's code's, and a metamethod run here, outside any protected call,
  // would abort the process (issue 31 #1).
  if (lua_type(L, -1) == LUA_TTABLE) {
    lua_pushliteral(L, "status");
    lua_rawget(L, -2);
    lua_pushliteral(L, "error");
    lua_rawget(L, -3);
    const bool has_status = lua_isinteger(L, -2);
    const lua_Integer code_status = has_status ? lua_tointeger(L, -2) : 0;
    const char* message = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : nullptr;
    if (has_status && code_status >= 400 && code_status <= 599)
      return ApiError{static_cast<int>(code_status), 0, message ? message : "error", ErrorBody::kErrorOnly};
    lua_pop(L, 2);
  }
  const char* message = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : nullptr;
  host.log(message ? message : "an error that is no string");
  return Failed(name, "failed");
}

}  // namespace crmd::functions
