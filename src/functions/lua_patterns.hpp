// Lua 5.4's pattern functions (`string.find`, `match`, `gmatch`, `gsub`), written for crmd so that
// the time limit of a function holds inside them (issue 31 #4a). The standard library's matcher
// backtracks in C without ever returning to the interpreter, so neither the instruction hook nor
// the clock sees it: `s:match("^%s*(.-)%s*$")` on 60,000 spaces ran 17 s. This matcher behaves as
// the manual's §6.4.1 describes (same results, same error messages, the same depth limit of 200
// nested items), and calls `tick` every kStepsPerTick steps of work, which raises the Lua error
// that ends the call once its budget or time is spent.
//
// The grammar, as matched here:
//   pattern  := ['^'] item* ['$']          '^' anchors at the start (not in gmatch), '$' at the end
//   item     := single [ '*' | '+' | '-' | '?' ] | '%' digit | '%b' x y | '%f' set | '(' | ')' | '()'
//   single   := '.' | '%' class | '%' punct | set | literal
//   set      := '[' ['^'] (range | '%' class | literal)+ ']'    (the first ']' after '[' or '[^' is literal)
//   class    := a c d g l p s u w x, upper case for the complement (C locale)
//
// Thread-safe: no state outside the lua_State it runs in.
#pragma once

#include <cstdint>

struct lua_State;

namespace crmd::functions {

// Steps of matching (one subject byte tried against one pattern item) between two ticks: a few
// tens of microseconds of work, so a call stops within a millisecond of its time limit.
inline constexpr std::int64_t kStepsPerTick = 1 << 14;

// Called every kStepsPerTick steps with the lua_State the match runs in; may raise a Lua error.
using PatternTick = void (*)(lua_State* L);

// Replaces find, match, gmatch and gsub in the `string` table on the stack top (also the strings'
// metatable's __index, which is that table) with the bounded ones.
void OpenBoundedPatterns(lua_State* L, PatternTick tick);

}  // namespace crmd::functions
