#include "functions/lua_function.hpp"

#include <fmt/format.h>

#include <time.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <lua.hpp>

#include "functions/lua_patterns.hpp"
#include "storage/database.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"

namespace crmd::functions {

namespace json = boost::json;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxDepth = 64;                 // nesting of tables and JSON both ways
// Instructions between two looks at the budget and the clock: ~10 microseconds of VM work.
constexpr int kHookEvery = 1'000;
// Elements table.move copies between two looks at the clock.
constexpr lua_Integer kMoveChunk = 1 << 14;
// What a JSON node costs besides its text (boost::json::value, an object's slot), to charge a
// conversion against the memory cap.
constexpr std::size_t kJsonNodeBytes = 32;
// How many times its text a crm call's answer takes once parsed (boost::json values and strings).
constexpr std::size_t kJsonTextGrowth = 4;
const char kNullKey = 0;                      // crm.null: a light userdata at this address

// One call's accounting. Its address is in every thread's extra space (lua_getextraspace: a new
// coroutine starts with a copy of its creator's), so the hooks find it without a table lookup.
struct Run {
  std::size_t memory_limit = 0;
  std::size_t memory_used = 0;
  std::int64_t budget = 0;
  std::int64_t spent = 0;
  Clock::time_point deadline{};
  bool out_of_memory = false;
  bool out_of_budget = false;
  bool out_of_time = false;
  std::exception_ptr fault{};  // a store's exception a crm call ended the run with
  const LuaHost* host = nullptr;

  bool Ended() const { return out_of_budget || out_of_time || fault; }
};

Run& RunOf(lua_State* L) { return **static_cast<Run**>(lua_getextraspace(L)); }

void* Allocate(void* ud, void* ptr, std::size_t osize, std::size_t nsize) {
  auto* run = static_cast<Run*>(ud);
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

// The time at a hook: the kernel's coarse clock (a few nanoseconds to read, behind by at most a
// tick) on the same base as steady_clock, which sets the deadline; the hook runs at every call.
Clock::time_point CoarseNow() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return Clock::time_point(std::chrono::duration_cast<Clock::duration>(std::chrono::seconds(ts.tv_sec) +
                                                                       std::chrono::nanoseconds(ts.tv_nsec)));
}

// Raises the error that ends the call when its budget or time is spent. Once ended, every look
// raises again, in every coroutine: a pcall that caught the error cannot carry on past its next
// call or its next kHookEvery instructions.
void Check(lua_State* L) {
  Run& run = RunOf(L);
  if (!run.Ended()) {
    if (run.spent > run.budget) run.out_of_budget = true;
    else if (CoarseNow() >= run.deadline) run.out_of_time = true;
    else return;
  }
  luaL_error(L, run.fault ? "the store failed" : run.out_of_time ? "time limit exceeded" : "instruction budget exceeded");
}

// Every kHookEvery instructions, and at every call of a function (Lua or C): a C function of the
// libraries runs without instructions, so a loop of costly calls is seen at each call.
void Hook(lua_State* L, lua_Debug* ar) {
  if (ar->event == LUA_HOOKCOUNT) RunOf(L).spent += kHookEvery;
  Check(L);
}

// JSON to Lua: null is crm.null, so that arrays keep their length.
void Push(lua_State* L, const json::value& v, int depth) {
  if (depth > kMaxDepth) luaL_error(L, "value nested too deep");
  luaL_checkstack(L, 3, "value nested too deep");
  switch (v.kind()) {
    case json::kind::null: lua_pushlightuserdata(L, const_cast<char*>(&kNullKey)); return;
    case json::kind::bool_: lua_pushboolean(L, v.get_bool()); return;
    case json::kind::int64: lua_pushinteger(L, v.get_int64()); return;
    case json::kind::uint64: lua_pushnumber(L, static_cast<double>(v.get_uint64())); return;
    case json::kind::double_: lua_pushnumber(L, v.get_double()); return;
    case json::kind::string: lua_pushlstring(L, v.get_string().data(), v.get_string().size()); return;
    case json::kind::array: {
      const auto& a = v.get_array();
      lua_createtable(L, static_cast<int>(a.size()), 0);
      lua_Integer i = 1;
      for (const auto& item : a) {
        Push(L, item, depth + 1);
        lua_rawseti(L, -2, i++);
      }
      return;
    }
    case json::kind::object: {
      const auto& o = v.get_object();
      lua_createtable(L, 0, static_cast<int>(o.size()));
      for (const auto& kv : o) {
        lua_pushlstring(L, kv.key().data(), kv.key().size());
        Push(L, kv.value(), depth + 1);
        lua_rawset(L, -3);
      }
      return;
    }
  }
}

// Lua to JSON: a table whose keys are exactly 1..n (n > 0) is an array, any other an object with
// string keys; an empty table is `{}`. `room` is what the JSON may still take of the call's memory
// cap: a table reached twice is converted twice, so a few KB of Lua (`t = {a = t, b = t}`, 24
// deep) would otherwise become gigabytes of JSON (issue 31 #5).
json::value Pull(lua_State* L, int index, int depth, std::size_t& room) {
  if (depth > kMaxDepth) luaL_error(L, "value nested too deep");
  const auto charge = [&](std::size_t bytes) {
    if (bytes > room) {
      RunOf(L).out_of_memory = true;
      luaL_error(L, "not enough memory");
    }
    room -= bytes;
  };
  charge(kJsonNodeBytes);
  index = lua_absindex(L, index);
  switch (lua_type(L, index)) {
    case LUA_TNIL: return nullptr;
    case LUA_TBOOLEAN: return lua_toboolean(L, index) != 0;
    case LUA_TNUMBER: {
      if (lua_isinteger(L, index)) return static_cast<std::int64_t>(lua_tointeger(L, index));
      const double d = lua_tonumber(L, index);
      if (!std::isfinite(d)) luaL_error(L, "a number must be finite to become JSON");
      return d;
    }
    case LUA_TSTRING: {
      std::size_t n = 0;
      const char* s = lua_tolstring(L, index, &n);
      charge(n);
      return json::string(s, n);
    }
    case LUA_TLIGHTUSERDATA:
      if (lua_touserdata(L, index) == &kNullKey) return nullptr;
      break;
    case LUA_TTABLE: {
      luaL_checkstack(L, 4, "value nested too deep");
      const lua_Integer length = static_cast<lua_Integer>(lua_rawlen(L, index));
      lua_Integer keys = 0;
      bool sequence = length > 0;
      lua_pushnil(L);
      while (lua_next(L, index) != 0) {
        ++keys;
        if (!lua_isinteger(L, -2)) sequence = false;
        lua_pop(L, 1);
      }
      if (sequence && keys == length) {
        json::array a;
        a.reserve(static_cast<std::size_t>(length));
        for (lua_Integer i = 1; i <= length; ++i) {
          lua_rawgeti(L, index, i);
          a.push_back(Pull(L, -1, depth + 1, room));
          lua_pop(L, 1);
        }
        return a;
      }
      json::object o;
      lua_pushnil(L);
      while (lua_next(L, index) != 0) {
        if (lua_type(L, -2) != LUA_TSTRING) luaL_error(L, "the keys of a table that becomes a JSON object must be strings");
        std::size_t n = 0;
        const char* k = lua_tolstring(L, -2, &n);
        charge(n);
        o[json::string_view(k, n)] = Pull(L, -1, depth + 1, room);
        lua_pop(L, 1);
      }
      return o;
    }
    default: break;
  }
  luaL_error(L, "a %s cannot become JSON", luaL_typename(L, index));
  return nullptr;
}

// A whole value, within what the call's memory cap leaves.
json::value Pull(lua_State* L, int index) {
  const Run& run = RunOf(L);
  std::size_t room = run.memory_limit > run.memory_used ? run.memory_limit - run.memory_used : 0;
  return Pull(L, index, 0, room);
}

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
  Run& run = RunOf(L);
  Check(L);
  try {
    std::pair<int, std::string> answer;
    {
      storage::ReadDeadline bound(run.deadline);
      answer = run.host->dispatch(method, target, body);
    }
    // Its JSON takes a few times its text: within what the memory cap leaves, or not at all.
    const std::size_t room = run.memory_limit > run.memory_used ? run.memory_limit - run.memory_used : 0;
    if (answer.second.size() > room / kJsonTextGrowth) {
      run.out_of_memory = true;
      luaL_error(L, "not enough memory");
    }
    auto parsed = ParseJson(answer.second);
    return {answer.first, parsed.ok() ? std::move(parsed).value() : json::value()};
  } catch (const storage::ReadTimedOut&) {
    if (Clock::now() < run.deadline) throw;
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
  if (!lua_isnoneornil(L, 2)) target += "where=" + Encoded(json::serialize(Pull(L, 2))) + "&";
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
  Push(L, results ? *results : json::value(json::array()), 0);
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
  Push(L, answer, 0);
  return 1;
}

// crm.count(class, where?) -> integer
int CrmCount(lua_State* L) {
  const std::string cls = ClassArg(L, 1);
  std::string target = "/classes/" + Encoded(cls) + "?count=1&limit=0";
  if (!lua_isnoneornil(L, 2)) target += "&where=" + Encoded(json::serialize(Pull(L, 2)));
  const json::value answer = Call(L, "GET", target, nullptr);
  const auto* count = answer.is_object() ? answer.get_object().if_contains("count") : nullptr;
  lua_pushinteger(L, count && count->is_int64() ? count->get_int64() : 0);
  return 1;
}

// crm.create(class, fields) -> {objectId=, createdAt=}
int CrmCreate(lua_State* L) {
  const std::string cls = ClassArg(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  const json::value fields = Pull(L, 2);
  Push(L, Call(L, "POST", "/classes/" + Encoded(cls), &fields), 0);
  return 1;
}

// crm.update(class, objectId, fields) -> {updatedAt=, ...}
int CrmUpdate(lua_State* L) {
  const std::string cls = ClassArg(L, 1);
  const std::string id = ClassArg(L, 2);
  luaL_checktype(L, 3, LUA_TTABLE);
  const json::value fields = Pull(L, 3);
  Push(L, Call(L, "PUT", "/classes/" + Encoded(cls) + "/" + Encoded(id), &fields), 0);
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

// string.rep without its empty-string loop: `("").rep("", 1e18)` copies nothing 10^18 times in
// the standard library. Every copy here is at least a byte, so the memory cap bounds the work.
int Rep(lua_State* L) {
  std::size_t l = 0, lsep = 0;
  const char* s = luaL_checklstring(L, 1, &l);
  const lua_Integer n = luaL_checkinteger(L, 2);
  const char* sep = luaL_optlstring(L, 3, "", &lsep);
  if (n <= 0 || l + lsep == 0) {
    lua_pushliteral(L, "");
    return 1;
  }
  if (l + lsep < l || l + lsep > std::numeric_limits<std::size_t>::max() / 2 / static_cast<std::size_t>(n))
    return luaL_error(L, "resulting string too large");
  const std::size_t total = static_cast<std::size_t>(n) * l + static_cast<std::size_t>(n - 1) * lsep;
  luaL_Buffer b;
  char* out = luaL_buffinitsize(L, &b, total);
  for (lua_Integer i = 0; i < n; ++i) {
    if (i > 0) {
      std::memcpy(out, sep, lsep);
      out += lsep;
    }
    std::memcpy(out, s, l);
    out += l;
  }
  luaL_pushresultsize(&b, total);
  return 1;
}

int LessThan(lua_State* L) {
  lua_pushboolean(L, lua_compare(L, 1, 2, LUA_OPLT));
  return 1;
}

// table.sort with `<` as a function when none is given: each comparison is then a call, which
// the hook sees (the library's own comparisons are not; 4 million elements sort for seconds).
// Upvalue 1: the library's sort.
int Sort(lua_State* L) {
  lua_settop(L, 2);
  if (lua_isnil(L, 2)) {
    lua_pushcfunction(L, LessThan);
    lua_replace(L, 2);
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, 2, 0);
  return 0;
}

// table.move, looking at the clock every kMoveChunk elements: its range is not bounded by memory
// (moving nils), so `table.move({}, 1, 1e12, 2)` runs for minutes in the library.
int Move(lua_State* L) {
  const lua_Integer f = luaL_checkinteger(L, 2);
  const lua_Integer e = luaL_checkinteger(L, 3);
  const lua_Integer t = luaL_checkinteger(L, 4);
  const int tt = lua_isnoneornil(L, 5) ? 1 : 5;
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, tt, LUA_TTABLE);
  if (e >= f) {
    luaL_argcheck(L, f > 0 || e < std::numeric_limits<lua_Integer>::max() + f, 3, "too many elements to move");
    const lua_Integer n = e - f + 1;
    luaL_argcheck(L, t <= std::numeric_limits<lua_Integer>::max() - n + 1, 4, "destination wrap around");
    // Overlapping to the right in one table: from the last element down, as the library does.
    const bool down = !(t > e || t <= f || (tt != 1 && !lua_compare(L, 1, tt, LUA_OPEQ)));
    for (lua_Integer k = 0; k < n; ++k) {
      const lua_Integer i = down ? n - 1 - k : k;
      lua_geti(L, 1, f + i);
      lua_seti(L, tt, t + i);
      if ((k + 1) % kMoveChunk == 0) Check(L);
    }
  }
  lua_pushvalue(L, tt);
  return 1;
}

// The libraries a function may use; no io, os, package, debug, and nothing that loads code. What
// the libraries do in C without returning to the interpreter for long (pattern matching, sorting,
// moving, repeating) is replaced by versions the time limit reaches.
void OpenSandbox(lua_State* L) {
  static const luaL_Reg libraries[] = {{LUA_GNAME, luaopen_base},          {LUA_TABLIBNAME, luaopen_table},
                                       {LUA_STRLIBNAME, luaopen_string},   {LUA_MATHLIBNAME, luaopen_math},
                                       {LUA_UTF8LIBNAME, luaopen_utf8},    {LUA_COLIBNAME, luaopen_coroutine}};
  for (const auto& library : libraries) {
    luaL_requiref(L, library.name, library.func, 1);
    lua_pop(L, 1);
  }
  for (const char* unsafe : {"dofile", "loadfile", "load", "require", "collectgarbage"}) {
    lua_pushnil(L);
    lua_setglobal(L, unsafe);
  }
  lua_getglobal(L, LUA_STRLIBNAME);
  lua_pushnil(L);
  lua_setfield(L, -2, "dump");  // bytecode out, and no way back in
  lua_pushcfunction(L, Rep);
  lua_setfield(L, -2, "rep");
  OpenBoundedPatterns(L, Check);  // the string table is also the strings' metatable's __index
  lua_pop(L, 1);
  lua_getglobal(L, LUA_TABLIBNAME);
  lua_getfield(L, -1, "sort");
  lua_pushcclosure(L, Sort, 1);
  lua_setfield(L, -2, "sort");
  lua_pushcfunction(L, Move);
  lua_setfield(L, -2, "move");
  lua_pop(L, 1);

  static const luaL_Reg crm[] = {{"find", CrmFind},     {"get", CrmGet},       {"count", CrmCount},
                                 {"create", CrmCreate}, {"update", CrmUpdate}, {"config", CrmConfig},
                                 {"log", CrmLog},       {nullptr, nullptr}};
  luaL_newlib(L, crm);
  lua_pushlightuserdata(L, const_cast<char*>(&kNullKey));
  lua_setfield(L, -2, "null");
  lua_setglobal(L, "crm");
  lua_pushcfunction(L, CrmLog);
  lua_setglobal(L, "print");
}

ApiError Failed(std::string_view name, std::string_view why) {
  return ApiError{500, 0, fmt::format("function {} {}", name, why), ErrorBody::kErrorOnly};
}

struct StateCloser {
  void operator()(lua_State* L) const { lua_close(L); }
};

}  // namespace

std::optional<std::string> CheckLua(std::string_view name, std::string_view code) {
  Run run{.memory_limit = 64u << 20, .budget = 0, .deadline = Clock::now()};
  std::unique_ptr<lua_State, StateCloser> L(lua_newstate(Allocate, &run));
  if (!L) return "out of memory";
  const std::string chunk = std::string("=").append(name);
  if (luaL_loadbufferx(L.get(), code.data(), code.size(), chunk.c_str(), "t") == LUA_OK) return std::nullopt;
  const char* message = lua_tostring(L.get(), -1);
  return message ? std::string(message) : std::string("it does not compile");
}

Result<json::value> RunLua(std::string_view name, std::string_view code, const json::object& body,
                           const json::value* record, const LuaLimits& limits, const LuaHost& host) {
  Run run{.memory_limit = limits.memory_bytes, .budget = limits.instructions, .deadline = Clock::now() + limits.time};
  run.host = &host;
  std::unique_ptr<lua_State, StateCloser> state(lua_newstate(Allocate, &run));
  if (!state) return Failed(name, "could not start");
  lua_State* L = state.get();
  *static_cast<Run**>(lua_getextraspace(L)) = &run;
  lua_sethook(L, Hook, LUA_MASKCOUNT | LUA_MASKCALL, kHookEvery);

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
    Push(L, *c->body, 0);
    lua_setfield(L, -2, "body");
    if (c->record) {
      Push(L, *c->record, 0);
      lua_setfield(L, -2, "record");
    }
    lua_setglobal(L, "request");
    const std::string chunk = std::string("=").append(c->name);
    if (luaL_loadbufferx(L, c->code.data(), c->code.size(), chunk.c_str(), "t") != LUA_OK) lua_error(L);
    lua_call(L, 0, 1);
    c->answer = lua_isnil(L, -1) ? json::value(json::object()) : Pull(L, -1);
    return 0;
  });
  lua_pushlightuserdata(L, &call);
  const int status = lua_pcall(L, 1, 0, 0);
  if (status == LUA_OK) return std::move(call.answer);

  if (run.fault) std::rethrow_exception(run.fault);
  if (run.out_of_time) {
    host.log("time limit exceeded");
    return Failed(name, "ran past its time limit");
  }
  if (run.out_of_budget) {
    host.log("instruction budget exceeded");
    return Failed(name, "ran past its instruction budget");
  }
  if (status == LUA_ERRMEM || run.out_of_memory) {
    host.log("memory limit exceeded");
    return Failed(name, "ran out of memory");
  }
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
