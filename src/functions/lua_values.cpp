// JSON to Lua and back for an operator's function, charged against the call's memory cap.
#include <cmath>

#include "functions/lua_run.hpp"

namespace crmd::functions {

namespace json = boost::json;

namespace {

constexpr int kMaxValueDepth = 64;  // nesting of tables and JSON both ways
// What a JSON node costs besides its text (boost::json::value, an object's slot), to charge a
// conversion against the memory cap.
constexpr std::size_t kJsonNodeBytes = 32;
const char kNullKey = 0;

// JSON to Lua: null is crm.null, so that arrays keep their length.
void Push(lua_State* L, const json::value& v, int depth) {
  if (depth > kMaxValueDepth) luaL_error(L, "value nested too deep");
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
  if (depth > kMaxValueDepth) luaL_error(L, "value nested too deep");
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

}  // namespace

const void* NullKey() { return &kNullKey; }

void PushJson(lua_State* L, const json::value& v) { Push(L, v, 0); }

json::value PullJson(lua_State* L, int index) {
  std::size_t room = RunOf(L).Room();
  return Pull(L, index, 0, room);
}

}  // namespace crmd::functions
