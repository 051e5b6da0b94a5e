// The look at a function call's limits: its instruction budget and its deadline.
#include "functions/lua_run.hpp"

#include <time.h>

namespace crmd::functions {

namespace {

// The time at a hook: the kernel's coarse clock (a few nanoseconds to read, behind by at most a
// tick) on the same base as steady_clock, which sets the deadline; the hook runs at every call.
LuaClock::time_point CoarseNow() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return LuaClock::time_point(std::chrono::duration_cast<LuaClock::duration>(std::chrono::seconds(ts.tv_sec) +
                                                                       std::chrono::nanoseconds(ts.tv_nsec)));
}

}  // namespace

void CheckLimits(lua_State* L) {
  LuaRun& run = RunOf(L);
  if (!run.Ended()) {
    if (run.spent > run.budget) run.out_of_budget = true;
    else if (CoarseNow() >= run.deadline) run.out_of_time = true;
    else return;
  }
  luaL_error(L, run.fault ? "the store failed" : run.out_of_time ? "time limit exceeded" : "instruction budget exceeded");
}

// Every kHookEvery instructions, and at every call of a function (Lua or C): a C function of the
// libraries runs without instructions, so a loop of costly calls is seen at each call.
void LimitsHook(lua_State* L, lua_Debug* ar) {
  if (ar->event == LUA_HOOKCOUNT) RunOf(L).spent += kHookEvery;
  CheckLimits(L);
}

}  // namespace crmd::functions
