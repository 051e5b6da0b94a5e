#include "functions/lua_patterns.hpp"

#include <cctype>
#include <cstring>
#include <lua.hpp>

namespace crmd::functions {

namespace {

constexpr int kMaxCaptures = 32;   // LUA_MAXCAPTURES: what patterns written for Lua expect
constexpr int kMaxPatternDepth = 200;     // nested items matched recursively ("pattern too complex" beyond)
constexpr std::ptrdiff_t kUnfinished = -1;  // a capture opened and not closed yet
constexpr std::ptrdiff_t kPosition = -2;    // `()`: the position, not a substring
constexpr char kEscape = '%';
constexpr const char* kSpecials = "^$*+?.([%-";

PatternTick TickOf(lua_State* L, int upvalue) {
  return *static_cast<PatternTick*>(lua_touserdata(L, lua_upvalueindex(upvalue)));
}

// One match of one pattern against one subject. Positions are pointers into both, as they stay
// valid for the call (the strings are on the Lua stack).
class Matcher {
 public:
  Matcher(lua_State* L, PatternTick tick, const char* subject, std::size_t subject_size, const char* pattern,
          std::size_t pattern_size)
      : L_(L), tick_(tick), src_(subject), src_end_(subject + subject_size), p_end_(pattern + pattern_size) {}

  // Forgets the captures of a previous attempt.
  void Reset() {
    level_ = 0;
    depth_ = kMaxPatternDepth;
  }
  // The end of a match of pattern `p` starting at `s`, or null.
  const char* Match(const char* s, const char* p);

  int level() const { return level_; }
  const char* subject() const { return src_; }
  const char* subject_end() const { return src_end_; }
  // Pushes capture `i` (the whole match `s`..`e` when there are none and i is 0).
  void PushCapture(int i, const char* s, const char* e);
  // Pushes every capture (the whole match when there are none and `s` is given): how many.
  int PushCaptures(const char* s, const char* e, bool whole_if_none);

 private:
  void Step(std::int64_t n = 1) {
    steps_ += n;
    if (steps_ >= kStepsPerTick) {
      steps_ = 0;
      tick_(L_);
    }
  }
  const char* ClassEnd(const char* p);
  bool SingleMatch(const char* s, const char* p, const char* ep);
  bool InSet(int c, const char* p, const char* ec);
  const char* Balance(const char* s, const char* p);
  const char* MaxExpand(const char* s, const char* p, const char* ep);
  const char* MinExpand(const char* s, const char* p, const char* ep);
  const char* OpenCapture(const char* s, const char* p, std::ptrdiff_t what);
  const char* CloseCapture(const char* s, const char* p);
  const char* BackReference(const char* s, int digit);
  int CheckCapture(int digit);

  lua_State* L_;
  PatternTick tick_;
  const char* src_;
  const char* src_end_;
  const char* p_end_;
  int level_ = 0;
  int depth_ = kMaxPatternDepth;
  std::int64_t steps_ = 0;
  struct {
    const char* init;
    std::ptrdiff_t len;
  } capture_[kMaxCaptures];
};

bool ClassMatches(int c, int cl) {
  bool yes = false;
  switch (std::tolower(cl)) {
    case 'a': yes = std::isalpha(c); break;
    case 'c': yes = std::iscntrl(c); break;
    case 'd': yes = std::isdigit(c); break;
    case 'g': yes = std::isgraph(c); break;
    case 'l': yes = std::islower(c); break;
    case 'p': yes = std::ispunct(c); break;
    case 's': yes = std::isspace(c); break;
    case 'u': yes = std::isupper(c); break;
    case 'w': yes = std::isalnum(c); break;
    case 'x': yes = std::isxdigit(c); break;
    default: return cl == c;  // `%.`, `%%`: the character itself
  }
  return std::isupper(cl) ? !yes : yes;
}

const char* Matcher::ClassEnd(const char* p) {
  const char c = *p++;
  if (c == kEscape) {
    if (p >= p_end_) luaL_error(L_, "malformed pattern (ends with '%%')");
    return p + 1;
  }
  if (c == '[') {
    if (p < p_end_ && *p == '^') ++p;
    do {  // the first character is part of the set even when it is ']'
      if (p >= p_end_) luaL_error(L_, "malformed pattern (missing ']')");
      if (*p++ == kEscape && p < p_end_) ++p;
    } while (p >= p_end_ || *p != ']');
    return p + 1;
  }
  return p;
}

// `p` is the '[' of a set whose ']' is at `ec`.
bool Matcher::InSet(int c, const char* p, const char* ec) {
  bool in = true;
  if (p[1] == '^') {
    in = false;
    ++p;
  }
  while (++p < ec) {
    if (*p == kEscape) {
      ++p;
      if (ClassMatches(c, static_cast<unsigned char>(*p))) return in;
    } else if (p + 2 < ec && p[1] == '-') {
      p += 2;
      if (static_cast<unsigned char>(p[-2]) <= c && c <= static_cast<unsigned char>(*p)) return in;
    } else if (static_cast<unsigned char>(*p) == c) {
      return in;
    }
  }
  return !in;
}

bool Matcher::SingleMatch(const char* s, const char* p, const char* ep) {
  Step();
  if (s >= src_end_) return false;
  const int c = static_cast<unsigned char>(*s);
  switch (*p) {
    case '.': return true;
    case kEscape: return ClassMatches(c, static_cast<unsigned char>(p[1]));
    case '[': return InSet(c, p, ep - 1);
    default: return static_cast<unsigned char>(*p) == c;
  }
}

const char* Matcher::Balance(const char* s, const char* p) {
  if (p + 1 >= p_end_) luaL_error(L_, "malformed pattern (missing arguments to '%%b')");
  if (s >= src_end_ || *s != *p) return nullptr;
  const char open = p[0], close = p[1];
  int depth = 1;
  while (++s < src_end_) {
    Step();
    if (*s == close) {
      if (--depth == 0) return s + 1;
    } else if (*s == open) {
      ++depth;
    }
  }
  return nullptr;
}

const char* Matcher::MaxExpand(const char* s, const char* p, const char* ep) {
  std::ptrdiff_t i = 0;
  while (SingleMatch(s + i, p, ep)) ++i;
  for (; i >= 0; --i) {  // the longest run first, then shorter ones
    if (const char* end = Match(s + i, ep + 1)) return end;
  }
  return nullptr;
}

const char* Matcher::MinExpand(const char* s, const char* p, const char* ep) {
  for (;;) {
    if (const char* end = Match(s, ep + 1)) return end;
    if (!SingleMatch(s, p, ep)) return nullptr;
    ++s;
  }
}

const char* Matcher::OpenCapture(const char* s, const char* p, std::ptrdiff_t what) {
  if (level_ >= kMaxCaptures) luaL_error(L_, "too many captures");
  capture_[level_].init = s;
  capture_[level_].len = what;
  ++level_;
  const char* end = Match(s, p);
  if (!end) --level_;
  return end;
}

const char* Matcher::CloseCapture(const char* s, const char* p) {
  int open = -1;
  for (int i = level_ - 1; i >= 0; --i)
    if (capture_[i].len == kUnfinished) {
      open = i;
      break;
    }
  if (open < 0) luaL_error(L_, "invalid pattern capture");
  capture_[open].len = s - capture_[open].init;
  const char* end = Match(s, p);
  if (!end) capture_[open].len = kUnfinished;
  return end;
}

int Matcher::CheckCapture(int digit) {
  const int i = digit - '1';
  if (i < 0 || i >= level_ || capture_[i].len == kUnfinished) luaL_error(L_, "invalid capture index %%%d", i + 1);
  return i;
}

const char* Matcher::BackReference(const char* s, int digit) {
  const int i = CheckCapture(digit);
  const std::size_t len = static_cast<std::size_t>(capture_[i].len);
  Step(1 + static_cast<std::int64_t>(len / 16));
  if (static_cast<std::size_t>(src_end_ - s) >= len && std::memcmp(capture_[i].init, s, len) == 0) return s + len;
  return nullptr;
}

const char* Matcher::Match(const char* s, const char* p) {
  if (depth_-- == 0) luaL_error(L_, "pattern too complex");
  struct Restore {
    int& depth;
    ~Restore() { ++depth; }
  } restore{depth_};
  // Items that match one character and are not repeated advance here, without recursion.
  for (;;) {
    if (p >= p_end_) return s;
    switch (*p) {
      case '(':
        if (p + 1 < p_end_ && p[1] == ')') return OpenCapture(s, p + 2, kPosition);
        return OpenCapture(s, p + 1, kUnfinished);
      case ')':
        return CloseCapture(s, p + 1);
      case '$':
        if (p + 1 == p_end_) return s == src_end_ ? s : nullptr;
        break;  // a '$' elsewhere is the character itself
      case kEscape:
        if (p + 1 < p_end_ && p[1] == 'b') {
          s = Balance(s, p + 2);
          if (!s) return nullptr;
          p += 4;
          continue;
        }
        if (p + 1 < p_end_ && p[1] == 'f') {
          p += 2;
          if (p >= p_end_ || *p != '[') luaL_error(L_, "missing '[' after '%%f' in pattern");
          const char* ep = ClassEnd(p);
          const int before = s == src_ ? '\0' : static_cast<unsigned char>(s[-1]);
          const int here = s < src_end_ ? static_cast<unsigned char>(*s) : '\0';
          Step();
          if (InSet(before, p, ep - 1) || !InSet(here, p, ep - 1)) return nullptr;
          p = ep;
          continue;
        }
        if (p + 1 < p_end_ && std::isdigit(static_cast<unsigned char>(p[1]))) {
          s = BackReference(s, static_cast<unsigned char>(p[1]));
          if (!s) return nullptr;
          p += 2;
          continue;
        }
        break;
      default:
        break;
    }
    const char* ep = ClassEnd(p);
    const char suffix = ep < p_end_ ? *ep : '\0';
    if (!SingleMatch(s, p, ep)) {
      if (suffix == '*' || suffix == '?' || suffix == '-') {  // may match nothing
        p = ep + 1;
        continue;
      }
      return nullptr;
    }
    switch (suffix) {
      case '?':
        if (const char* end = Match(s + 1, ep + 1)) return end;
        p = ep + 1;
        continue;
      case '+': return MaxExpand(s + 1, p, ep);
      case '*': return MaxExpand(s, p, ep);
      case '-': return MinExpand(s, p, ep);
      default:
        ++s;
        p = ep;
        continue;
    }
  }
}

void Matcher::PushCapture(int i, const char* s, const char* e) {
  if (i >= level_) {
    if (i != 0) luaL_error(L_, "invalid capture index %%%d", i + 1);
    lua_pushlstring(L_, s, static_cast<std::size_t>(e - s));
    return;
  }
  const std::ptrdiff_t len = capture_[i].len;
  if (len == kUnfinished) luaL_error(L_, "unfinished capture");
  if (len == kPosition) lua_pushinteger(L_, static_cast<lua_Integer>(capture_[i].init - src_) + 1);
  else lua_pushlstring(L_, capture_[i].init, static_cast<std::size_t>(len));
}

int Matcher::PushCaptures(const char* s, const char* e, bool whole_if_none) {
  const int n = (level_ == 0 && whole_if_none) ? 1 : level_;
  luaL_checkstack(L_, n, "too many captures");
  for (int i = 0; i < n; ++i) PushCapture(i, s, e);
  return n;
}

// A position argument as Lua's string functions read it: negative counts from the end, 0 is 1.
std::size_t StartOf(lua_Integer pos, std::size_t len) {
  if (pos > 0) return static_cast<std::size_t>(pos);
  if (pos == 0) return 1;
  if (pos < -static_cast<lua_Integer>(len)) return 1;
  return len + static_cast<std::size_t>(pos) + 1;
}

bool HasSpecials(const char* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (std::strchr(kSpecials, p[i]) != nullptr && p[i] != '\0') return true;
  return false;
}

// A plain search (find with `plain`, or a pattern without specials), ticking as it compares.
const char* FindPlain(lua_State* L, PatternTick tick, const char* s, std::size_t ls, const char* p, std::size_t lp) {
  if (lp == 0) return s;
  if (lp > ls) return nullptr;
  std::int64_t steps = 0;
  const char* last = s + (ls - lp);
  while (s <= last) {
    const void* hit = std::memchr(s, *p, static_cast<std::size_t>(last - s) + 1);
    if (!hit) return nullptr;
    const char* at = static_cast<const char*>(hit);
    steps += 1 + static_cast<std::int64_t>(lp / 16) + (at - s) / 256;
    if (steps >= kStepsPerTick) {
      steps = 0;
      tick(L);
    }
    if (std::memcmp(at + 1, p + 1, lp - 1) == 0) return at;
    s = at + 1;
  }
  return nullptr;
}

int FindOrMatch(lua_State* L, bool find) {
  std::size_t ls = 0, lp = 0;
  const char* s = luaL_checklstring(L, 1, &ls);
  const char* p = luaL_checklstring(L, 2, &lp);
  const std::size_t init = StartOf(luaL_optinteger(L, 3, 1), ls);
  if (init > ls + 1) {
    luaL_pushfail(L);
    return 1;
  }
  const PatternTick tick = TickOf(L, 1);
  if (find && (lua_toboolean(L, 4) || !HasSpecials(p, lp))) {
    const char* at = FindPlain(L, tick, s + init - 1, ls - init + 1, p, lp);
    if (!at) {
      luaL_pushfail(L);
      return 1;
    }
    lua_pushinteger(L, static_cast<lua_Integer>(at - s) + 1);
    lua_pushinteger(L, static_cast<lua_Integer>(at - s + lp));
    return 2;
  }
  const bool anchored = lp > 0 && *p == '^';
  if (anchored) {
    ++p;
    --lp;
  }
  Matcher m(L, tick, s, ls, p, lp);
  const char* start = s + init - 1;
  do {
    m.Reset();
    if (const char* end = m.Match(start, p)) {
      if (!find) return m.PushCaptures(start, end, true);
      lua_pushinteger(L, static_cast<lua_Integer>(start - s) + 1);
      lua_pushinteger(L, static_cast<lua_Integer>(end - s));
      return m.PushCaptures(nullptr, nullptr, false) + 2;
    }
  } while (start++ < m.subject_end() && !anchored);
  luaL_pushfail(L);
  return 1;
}

int Find(lua_State* L) { return FindOrMatch(L, true); }
int Match(lua_State* L) { return FindOrMatch(L, false); }

// gmatch's iterator: upvalues subject, pattern, state, tick.
struct GmatchState {
  std::size_t next;       // offset where the next attempt starts
  std::ptrdiff_t last;    // end offset of the previous match, -1 before the first
};

int GmatchNext(lua_State* L) {
  std::size_t ls = 0, lp = 0;
  const char* s = lua_tolstring(L, lua_upvalueindex(1), &ls);
  const char* p = lua_tolstring(L, lua_upvalueindex(2), &lp);
  auto* state = static_cast<GmatchState*>(lua_touserdata(L, lua_upvalueindex(3)));
  Matcher m(L, TickOf(L, 4), s, ls, p, lp);
  for (const char* src = s + state->next; src <= s + ls; ++src) {
    m.Reset();
    const char* end = m.Match(src, p);
    // An empty match where the previous one ended is no new match.
    if (end && (state->last < 0 || end != s + state->last)) {
      state->next = static_cast<std::size_t>(end - s);
      state->last = end - s;
      return m.PushCaptures(src, end, true);
    }
  }
  state->next = ls + 1;
  return 0;
}

int Gmatch(lua_State* L) {
  std::size_t ls = 0;
  luaL_checklstring(L, 1, &ls);
  luaL_checkstring(L, 2);
  std::size_t init = StartOf(luaL_optinteger(L, 3, 1), ls);
  if (init > ls + 1) init = ls + 1;
  lua_settop(L, 2);
  auto* state = static_cast<GmatchState*>(lua_newuserdatauv(L, sizeof(GmatchState), 0));
  state->next = init - 1;
  state->last = -1;
  lua_pushvalue(L, lua_upvalueindex(1));  // the tick
  lua_pushcclosure(L, GmatchNext, 4);
  return 1;
}

// Appends the replacement of the match `s`..`e` (the whole text when the table or function gives
// false or nil) to `b`.
void AddReplacement(Matcher& m, luaL_Buffer& b, const char* s, const char* e, int kind) {
  lua_State* L = b.L;
  if (kind == LUA_TSTRING || kind == LUA_TNUMBER) {
    std::size_t lr = 0;
    const char* r = lua_tolstring(L, 3, &lr);
    const char* end = r + lr;
    for (const char* at; (at = static_cast<const char*>(std::memchr(r, kEscape, static_cast<std::size_t>(end - r)))) != nullptr;) {
      luaL_addlstring(&b, r, static_cast<std::size_t>(at - r));
      ++at;
      if (at < end && *at == kEscape) {
        luaL_addchar(&b, kEscape);
      } else if (at < end && *at == '0') {
        luaL_addlstring(&b, s, static_cast<std::size_t>(e - s));
      } else if (at < end && std::isdigit(static_cast<unsigned char>(*at))) {
        m.PushCapture(*at - '1', s, e);
        luaL_tolstring(L, -1, nullptr);
        lua_remove(L, -2);
        luaL_addvalue(&b);
      } else {
        luaL_error(L, "invalid use of '%c' in replacement string", kEscape);
      }
      r = at + 1;
    }
    luaL_addlstring(&b, r, static_cast<std::size_t>(end - r));
    return;
  }
  if (kind == LUA_TFUNCTION) {
    lua_pushvalue(L, 3);
    const int n = m.PushCaptures(s, e, true);
    lua_call(L, n, 1);
  } else {  // a table, indexed by the first capture
    m.PushCapture(0, s, e);
    lua_gettable(L, 3);
  }
  if (!lua_toboolean(L, -1)) {
    lua_pop(L, 1);
    luaL_addlstring(&b, s, static_cast<std::size_t>(e - s));
  } else if (!lua_isstring(L, -1)) {
    luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
  } else {
    luaL_addvalue(&b);
  }
}

int Gsub(lua_State* L) {
  std::size_t ls = 0, lp = 0;
  const char* src = luaL_checklstring(L, 1, &ls);
  const char* p = luaL_checklstring(L, 2, &lp);
  const int kind = lua_type(L, 3);
  const lua_Integer max = luaL_optinteger(L, 4, static_cast<lua_Integer>(ls) + 1);
  luaL_argexpected(L, kind == LUA_TNUMBER || kind == LUA_TSTRING || kind == LUA_TFUNCTION || kind == LUA_TTABLE, 3,
                   "string/function/table");
  const bool anchored = lp > 0 && *p == '^';
  if (anchored) {
    ++p;
    --lp;
  }
  const PatternTick tick = TickOf(L, 1);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  Matcher m(L, tick, src, ls, p, lp);
  const char* s = src;
  const char* last = nullptr;
  lua_Integer n = 0;
  while (n < max) {
    m.Reset();
    const char* e = m.Match(s, p);
    if (e && e != last) {
      ++n;
      AddReplacement(m, b, s, e, kind);
      s = last = e;
    } else if (s < m.subject_end()) {
      luaL_addchar(&b, *s++);
    } else {
      break;
    }
    if (anchored) break;
  }
  luaL_addlstring(&b, s, static_cast<std::size_t>(m.subject_end() - s));
  luaL_pushresult(&b);
  lua_pushinteger(L, n);
  return 2;
}

}  // namespace

void OpenBoundedPatterns(lua_State* L, PatternTick tick) {
  const int table = lua_absindex(L, -1);
  auto* slot = static_cast<PatternTick*>(lua_newuserdatauv(L, sizeof(PatternTick), 0));
  *slot = tick;
  const struct {
    const char* name;
    lua_CFunction fn;
  } replaced[] = {{"find", Find}, {"match", Match}, {"gmatch", Gmatch}, {"gsub", Gsub}};
  for (const auto& r : replaced) {
    lua_pushvalue(L, -1);
    lua_pushcclosure(L, r.fn, 1);
    lua_setfield(L, table, r.name);
  }
  lua_pop(L, 1);
}

}  // namespace crmd::functions
