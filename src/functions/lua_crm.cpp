// The `crm` API of an operator's function (docs/FUNCTIONS.md): each call re-enters the record
// API through LuaHost, its reads bounded by the call's deadline, its answer parsed within the
// call's memory cap.
#include <fmt/format.h>

#include <cctype>
#include <cstdlib>

#include "functions/lua_run.hpp"
#include "storage/read_deadline.hpp"
#include "storage/storage_error.hpp"
#include "util/json.hpp"

namespace crmd::functions {

namespace json = boost::json;

namespace {

// How many times its text a crm call's answer takes once parsed (boost::json values and strings).
constexpr std::size_t kJsonTextGrowth = 4;

// A failed record-API call raises {status=..., code=..., error=...}: uncaught, it is the answer.
[[noreturn]] void RaiseApiError(lua_State* L, int status, const json::value& body) {
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, status);
  lua_setfield(L, -2, "status");
  if (const auto* o = body.if_object()) {
    if (const auto* code = o->if_contains("code"); code && code->is_int64()) {
      lua_pushinteger(L, code->get_int64());
      lua_setfield(L, -2, "code");
    }
    if (const auto* error = o->if_contains("error"); error && error->is_string()) {
      lua_pushlstring(L, error->get_string().data(), error->get_string().size());
      lua_setfield(L, -2, "error");
    }
  }
  lua_error(L);
  std::abort();  // lua_error does not return
}

// One `crm` call through the host: its reads end at the call's deadline too. A fault of the store
// (an exception, which Lua's protected call would turn into a nameless error) ends the call, and
// RunLua throws it again once the interpreter is out of the way.
std::pair<int, json::value> Dispatch(lua_State* L, std::string_view method, const std::string& target,
                                     const json::value* body) {
  LuaRun& run = RunOf(L);
  CheckLimits(L);
  try {
    std::pair<int, std::string> answer;
    {
      storage::ReadDeadline bound(run.deadline);
      answer = run.host->dispatch(method, target, body);
    }
    // Its JSON takes a few times its text: within what the memory cap leaves, or not at all.
    const std::size_t room = run.Room();
    if (answer.second.size() > room / kJsonTextGrowth) {
      run.out_of_memory = true;
      luaL_error(L, "not enough memory");
    }
    auto parsed = ParseJson(answer.second);
    return {answer.first, parsed.ok() ? std::move(parsed).value() : json::value()};
  } catch (const storage::ReadTimedOut&) {
    if (LuaClock::now() < run.deadline) throw;
    run.out_of_time = true;
  } catch (const std::exception&) {
    run.fault = std::current_exception();
  }
  luaL_error(L, run.fault ? "the store failed" : "time limit exceeded");
  std::abort();  // luaL_error does not return
}

json::value Call(lua_State* L, std::string_view method, const std::string& target, const json::value* body) {
  auto [status, answer] = Dispatch(L, method, target, body);
  if (status < 200 || status > 299) RaiseApiError(L, status, answer);
  return std::move(answer);
}

std::string ClassArg(lua_State* L, int index) {
  std::size_t n = 0;
  const char* s = luaL_checklstring(L, index, &n);
  return std::string(s, n);
}

std::string Encoded(std::string_view text) {
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') out.push_back(static_cast<char>(c));
    else out += fmt::format("%{:02X}", c);
  }
  return out;
}

// crm.find(class, where?, {limit=, skip=, order=, keys=}?) -> array of records
int CrmFind(lua_State* L) {
  const std::string cls = ClassArg(L, 1);
  std::string target = "/classes/" + Encoded(cls) + "?";
  if (!lua_isnoneornil(L, 2)) target += "where=" + Encoded(json::serialize(PullJson(L, 2))) + "&";
  if (lua_istable(L, 3)) {
    for (const char* option : {"limit", "skip", "order", "keys", "include"}) {
      lua_getfield(L, 3, option);
      if (!lua_isnil(L, -1)) {
        std::size_t n = 0;
        const char* v = luaL_tolstring(L, -1, &n);
        target += fmt::format("{}={}&", option, Encoded(std::string_view(v, n)));
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
    }
  }
  target.pop_back();
  const json::value answer = Call(L, "GET", target, nullptr);
  const auto* results = answer.is_object() ? answer.get_object().if_contains("results") : nullptr;
  PushJson(L, results ? *results : json::value(json::array()));
  return 1;
}

// crm.get(class, objectId) -> record, or nil when there is none
int CrmGet(lua_State* L) {
  const std::string cls = ClassArg(L, 1);
  const std::string id = ClassArg(L, 2);
  auto [status, answer] = Dispatch(L, "GET", "/classes/" + Encoded(cls) + "/" + Encoded(id), nullptr);
  if (status == 404) {
    lua_pushnil(L);
    return 1;
  }
  if (status < 200 || status > 299) RaiseApiError(L, status, answer);
  PushJson(L, answer);
  return 1;
}

// crm.count(class, where?) -> integer
int CrmCount(lua_State* L) {
  const std::string cls = ClassArg(L, 1);
  std::string target = "/classes/" + Encoded(cls) + "?count=1&limit=0";
  if (!lua_isnoneornil(L, 2)) target += "&where=" + Encoded(json::serialize(PullJson(L, 2)));
  const json::value answer = Call(L, "GET", target, nullptr);
  const auto* count = answer.is_object() ? answer.get_object().if_contains("count") : nullptr;
  lua_pushinteger(L, count && count->is_int64() ? count->get_int64() : 0);
  return 1;
}

// crm.create(class, fields) -> {objectId=, createdAt=}
int CrmCreate(lua_State* L) {
  const std::string cls = ClassArg(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  const json::value fields = PullJson(L, 2);
  PushJson(L, Call(L, "POST", "/classes/" + Encoded(cls), &fields));
  return 1;
}

// crm.update(class, objectId, fields) -> {updatedAt=, ...}
int CrmUpdate(lua_State* L) {
  const std::string cls = ClassArg(L, 1);
  const std::string id = ClassArg(L, 2);
  luaL_checktype(L, 3, LUA_TTABLE);
  const json::value fields = PullJson(L, 3);
  PushJson(L, Call(L, "PUT", "/classes/" + Encoded(cls) + "/" + Encoded(id), &fields));
  return 1;
}

// crm.config(flag) -> boolean (spec §4.9's Config rows: the first created decides)
int CrmConfig(lua_State* L) {
  std::size_t n = 0;
  const char* flag = luaL_checklstring(L, 1, &n);
  lua_pushboolean(L, RunOf(L).host->config_flag(std::string_view(flag, n)));
  return 1;
}

// crm.log(...) -> a log line (print does the same)
int CrmLog(lua_State* L) {
  std::string line;
  const int n = lua_gettop(L);
  for (int i = 1; i <= n; ++i) {
    std::size_t len = 0;
    const char* s = luaL_tolstring(L, i, &len);
    if (i > 1) line.push_back(' ');
    line.append(s, len);
    lua_pop(L, 1);
    if (line.size() > 4096) break;  // a log line, not a data dump
  }
  RunOf(L).host->log(line.substr(0, 4096));
  return 0;
}

}  // namespace

void OpenCrm(lua_State* L) {
  static const luaL_Reg crm[] = {{"find", CrmFind},     {"get", CrmGet},       {"count", CrmCount},
                                 {"create", CrmCreate}, {"update", CrmUpdate}, {"config", CrmConfig},
                                 {"log", CrmLog},       {nullptr, nullptr}};
  luaL_newlib(L, crm);
  lua_pushlightuserdata(L, const_cast<void*>(NullKey()));
  lua_setfield(L, -2, "null");
}

}  // namespace crmd::functions
