// The Lua libraries an operator's function may use (docs/FUNCTIONS.md), and the bounded versions
// of the library functions that do long work in C (issue 31 #4).
#include <cstring>
#include <limits>

#include "functions/lua_patterns.hpp"
#include "functions/lua_run.hpp"

namespace crmd::functions {

namespace {

// Elements table.move copies between two looks at the clock.
constexpr lua_Integer kMoveChunk = 1 << 14;

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
      if ((k + 1) % kMoveChunk == 0) CheckLimits(L);
    }
  }
  lua_pushvalue(L, tt);
  return 1;
}

}  // namespace

// No io, os, package, debug, and nothing that loads code. What the libraries do in C without
// returning to the interpreter for long (pattern matching, sorting, moving, repeating) is
// replaced by versions the time limit reaches.
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
  OpenBoundedPatterns(L, CheckLimits);  // the string table is also the strings' metatable's __index
  lua_pop(L, 1);
  lua_getglobal(L, LUA_TABLIBNAME);
  lua_getfield(L, -1, "sort");
  lua_pushcclosure(L, Sort, 1);
  lua_setfield(L, -2, "sort");
  lua_pushcfunction(L, Move);
  lua_setfield(L, -2, "move");
  lua_pop(L, 1);

  OpenCrm(L);
  lua_getfield(L, -1, "log");
  lua_setglobal(L, "print");  // print is crm.log
  lua_setglobal(L, "crm");
}

}  // namespace crmd::functions
