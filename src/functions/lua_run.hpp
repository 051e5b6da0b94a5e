// What every part of one call of an operator's Lua function shares (functions/lua_function.hpp
// runs it): its accounting, the look at its limits that ends it, and JSON both ways within its
// memory cap. Internal to functions/.
//
// One Run per call, on the stack of RunLua; its address is in every Lua thread's extra space
// (lua_getextraspace: a new coroutine starts with a copy of its creator's), so the hooks find it
// without a table lookup. Not thread-safe: a call runs on one thread.
#pragma once

#include <boost/json.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <lua.hpp>

#include "functions/lua_function.hpp"

namespace crmd::functions {

using LuaClock = std::chrono::steady_clock;

// Instructions between two looks at the budget and the clock: ~10 microseconds of VM work.
inline constexpr int kHookEvery = 1'000;

// One call's accounting.
struct LuaRun {
  std::size_t memory_limit = 0;
  std::size_t memory_used = 0;
  std::int64_t budget = 0;
  std::int64_t spent = 0;
  LuaClock::time_point deadline{};
  bool out_of_memory = false;
  bool out_of_budget = false;
  bool out_of_time = false;
  std::exception_ptr fault{};  // a store's exception a crm call ended the run with
  const LuaHost* host = nullptr;

  bool Ended() const { return out_of_budget || out_of_time || fault; }
  // What the memory cap still leaves.
  std::size_t Room() const { return memory_limit > memory_used ? memory_limit - memory_used : 0; }
};

inline LuaRun& RunOf(lua_State* L) { return **static_cast<LuaRun**>(lua_getextraspace(L)); }

// Raises the error that ends the call when its budget or time is spent. Once ended, every look
// raises again, in every coroutine: a pcall that caught the error cannot carry on past its next
// call or its next kHookEvery instructions.
void CheckLimits(lua_State* L);
// The hook RunLua sets (count and call events): counts the budget and calls CheckLimits.
void LimitsHook(lua_State* L, lua_Debug* ar);

// JSON to Lua: null is crm.null, so that arrays keep their length. Lua's allocator charges it.
void PushJson(lua_State* L, const boost::json::value& v);
// Lua to JSON, within what the memory cap leaves (raises "not enough memory" beyond).
boost::json::value PullJson(lua_State* L, int index);
// crm.null: a light userdata at this address.
const void* NullKey();

// The `crm` table (docs/FUNCTIONS.md), on the stack top.
void OpenCrm(lua_State* L);
// The libraries a function may use, with `crm` and `request`'s sandbox around them.
void OpenSandbox(lua_State* L);

}  // namespace crmd::functions
