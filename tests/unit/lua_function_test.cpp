// functions::RunLua (issue 31 #1, #4, #5): an operator's function is bounded in time, memory and
// instructions whatever its code does, and nothing it raises can take the process down. The
// pattern functions are crmd's own (functions/lua_patterns): their answers are checked against
// what Lua 5.4's manual gives for each case.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <chrono>
#include <string>

#include <lua.hpp>

#include "functions/lua_function.hpp"
#include "functions/lua_patterns.hpp"

namespace crmd::functions {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;

struct Ran {
  Result<json::value> answer;
  std::vector<std::string> logged;
  milliseconds took{0};
};

Ran Call(std::string_view code, LuaLimits limits = {}, const json::object& body = {}) {
  Ran ran{json::value(), {}, {}};
  LuaHost host;
  host.dispatch = [](std::string_view, const std::string&, const json::value*) {
    return std::pair<int, std::string>{200, R"({"results":[]})"};
  };
  host.config_flag = [](std::string_view) { return true; };
  host.log = [&](std::string_view m) { ran.logged.emplace_back(m); };
  const auto start = std::chrono::steady_clock::now();
  ran.answer = RunLua("t", code, body, nullptr, limits, host);
  ran.took = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
  return ran;
}

// The answer of `return <expression>` as JSON text.
std::string Eval(std::string_view expression) {
  auto ran = Call("return {" + std::string(expression) + "}");
  if (!ran.answer.ok()) return "error: " + ran.answer.error().message + " / " + (ran.logged.empty() ? "" : ran.logged.back());
  return json::serialize(ran.answer.value());
}

std::string ErrorOf(std::string_view code) {
  auto ran = Call(code);
  EXPECT_FALSE(ran.answer.ok());
  return ran.logged.empty() ? std::string() : ran.logged.back();
}

TEST(LuaPatternsTest, FindMatchGmatchAndGsubAnswerAsLuaDoes) {
  EXPECT_EQ(Eval(R"lua(string.find("hello world", "o w"))lua"), "[5,7]");
  EXPECT_EQ(Eval(R"lua(string.find("hello", "l+"))lua"), "[3,4]");
  EXPECT_EQ(Eval(R"lua(string.find("a.b", ".", 1, true))lua"), "[2,2]");
  EXPECT_EQ(Eval(R"lua(string.find("abc", "b", -1))lua"), "{}");  // nil: not found from the last character
  EXPECT_EQ(Eval(R"lua(string.find("abc", "", 10))lua"), "{}");
  EXPECT_EQ(Eval(R"lua(string.find("abc", "", 4))lua"), "[4,3]");
  EXPECT_EQ(Eval(R"lua(string.find("key = value", "(%w+)%s*=%s*(%w+)"))lua"), R"lua([1,11,"key","value"])lua");
  EXPECT_EQ(Eval(R"lua(string.match("  trim me  ", "^%s*(.-)%s*$"))lua"), R"lua(["trim me"])lua");
  EXPECT_EQ(Eval(R"lua(string.match("2026-11-28", "(%d+)-(%d+)-(%d+)"))lua"), R"lua(["2026","11","28"])lua");
  EXPECT_EQ(Eval(R"lua(string.match("hello", "()ll()"))lua"), "[3,5]");
  EXPECT_EQ(Eval(R"lua(string.match("THE (quick) fox", "%((%a+)%)"))lua"), R"lua(["quick"])lua");
  EXPECT_EQ(Eval(R"lua(string.match("f(a(b)c)d", "%b()"))lua"), R"lua(["(a(b)c)"])lua");
  EXPECT_EQ(Eval(R"lua(string.match("THE (quick) fox", "%f[%a]%a+", 5))lua"), R"lua(["quick"])lua");
  EXPECT_EQ(Eval(R"lua(string.match("abcabc", "(abc)%1"))lua"), R"lua(["abc"])lua");
  EXPECT_EQ(Eval(R"lua(string.match("x]y", "[]]"))lua"), R"lua(["]"])lua");
  EXPECT_EQ(Eval(R"lua(string.match("a-z", "[%a-]+"))lua"), R"lua(["a-z"])lua");
  EXPECT_EQ(Eval(R"lua(string.match("hello", "[^aeiou]+"))lua"), R"lua(["h"])lua");
  EXPECT_EQ(Eval(R"lua(string.match("cost: $5", "%$(%d)"))lua"), R"lua(["5"])lua");
  EXPECT_EQ(Eval(R"lua(string.match("end$", "d%$$"))lua"), R"lua(["d$"])lua");
  EXPECT_EQ(Eval(R"lua(string.match("ab", "a?b?c?"))lua"), R"lua(["ab"])lua");
  EXPECT_EQ(Eval(R"lua(("x"):rep(3, ","):match("^(x),"))lua"), R"lua(["x"])lua");
  EXPECT_EQ(Eval(R"lua(string.gsub("hello world", "o", "0"))lua"), R"lua(["hell0 w0rld",2])lua");
  EXPECT_EQ(Eval(R"lua(string.gsub("hello world", "(%w+)", "<%1>"))lua"), R"lua(["<hello> <world>",2])lua");
  EXPECT_EQ(Eval(R"lua(string.gsub("abc", "", "-"))lua"), R"lua(["-a-b-c-",4])lua");
  EXPECT_EQ(Eval(R"lua(string.gsub("abc", "%w", "%0%0", 2))lua"), R"lua(["aabbc",2])lua");
  EXPECT_EQ(Eval(R"lua(string.gsub("$name is $age", "%$(%w+)", {name = "Dana", age = 7}))lua"), R"lua(["Dana is 7",2])lua");
  EXPECT_EQ(Eval(R"lua(string.gsub("a b", "%w", function(w) return w:upper() end))lua"), R"lua(["A B",2])lua");
  EXPECT_EQ(Eval(R"lua(string.gsub("a b", "%w", function(w) return nil end))lua"), R"lua(["a b",2])lua");
  EXPECT_EQ(Eval(R"lua(string.gsub("hello", "^h", "H"))lua"), R"lua(["Hello",1])lua");
  EXPECT_EQ(Eval(R"lua(string.gsub("abc", "b*", "-"))lua"), R"lua(["-a-c-",3])lua");
  EXPECT_EQ(Eval(R"lua((function() local t = {} for k, v in string.gmatch("a=1, b=2", "(%w+)=(%w+)") do t[#t+1] = k .. v end return table.concat(t, ";") end)())lua"),
            R"lua(["a1;b2"])lua");
  EXPECT_EQ(Eval(R"lua((function() local n = 0 for _ in ("abc"):gmatch("") do n = n + 1 end return n end)())lua"), "[4]");
  EXPECT_EQ(Eval(R"lua((function() local t = {} for w in ("one two three"):gmatch("%a+", 5) do t[#t+1] = w end return table.concat(t, ",") end)())lua"),
            R"lua(["two,three"])lua");
}

TEST(LuaPatternsTest, MalformedPatternsRaiseLuasMessages) {
  EXPECT_NE(ErrorOf(R"lua(return string.find("a", "%"))lua").find("malformed pattern (ends with '%')"), std::string::npos);
  EXPECT_NE(ErrorOf(R"lua(return string.find("a", "[a"))lua").find("malformed pattern (missing ']')"), std::string::npos);
  EXPECT_NE(ErrorOf(R"lua(return string.find("a", "(a"))lua").find("unfinished capture"), std::string::npos);
  EXPECT_NE(ErrorOf(R"lua(return string.match("a", "a)"))lua").find("invalid pattern capture"), std::string::npos);
  EXPECT_NE(ErrorOf(R"lua(return string.find("aa", "(a)%2"))lua").find("invalid capture index %2"), std::string::npos);
  EXPECT_NE(ErrorOf(R"lua(return string.find("a", "%f"))lua").find("missing '[' after '%f' in pattern"), std::string::npos);
  EXPECT_NE(ErrorOf(R"lua(return string.find("a", "%b"))lua").find("missing arguments to '%b'"), std::string::npos);
  EXPECT_NE(ErrorOf(R"lua(return string.gsub("a", "a", "%9"))lua").find("invalid capture index %9"), std::string::npos);
  EXPECT_NE(ErrorOf(R"lua(return string.gsub("a", "a", "%x"))lua").find("invalid use of '%' in replacement string"), std::string::npos);
  EXPECT_NE(ErrorOf(R"lua(return string.match(string.rep("a", 300), string.rep("a?", 300)))lua").find("pattern too complex"),
            std::string::npos);
}

// Issue 31 #4a: backtracking inside the pattern matcher is seen by the time limit.
TEST(LuaFunctionTest, TheTimeLimitHoldsInsidePatternMatching) {
  LuaLimits limits;
  limits.time = milliseconds(200);
  auto ran = Call(R"lua(local s = "a" .. string.rep(" ", 60000) .. "a" return {s:match("^%s*(.-)%s*$")})lua", limits);
  ASSERT_FALSE(ran.answer.ok());
  EXPECT_EQ(ran.answer.error().message, "function t ran past its time limit");
  EXPECT_LT(ran.took, milliseconds(5'000));  // the library's matcher took 17 s
  // A plain find whose every candidate compares most of a long needle.
  ran = Call(R"lua(local h = string.rep("a", 4000000) local n = string.rep("a", 100000) .. "b" return {h:find(n, 1, true)})lua", limits);
  ASSERT_FALSE(ran.answer.ok());
  EXPECT_EQ(ran.answer.error().message, "function t ran past its time limit");
}

// Issue 31 #4b: coroutines, each of which starts with a fresh instruction count, do not escape.
TEST(LuaFunctionTest, NestedCoroutinesDoNotEscapeTheLimits) {
  LuaLimits limits;
  limits.time = milliseconds(300);
  auto ran = Call(R"lua(
    local function dive(n)
      local x = 0
      for i = 1, 500 do x = x + i end
      if n > 0 then
        local co = coroutine.create(dive)
        coroutine.resume(co, n - 1)
      end
      return x
    end
    while true do dive(150) end
  )lua", limits);
  ASSERT_FALSE(ran.answer.ok());
  EXPECT_TRUE(ran.answer.error().message == "function t ran past its time limit" ||
              ran.answer.error().message == "function t ran past its instruction budget")
      << ran.answer.error().message;
  // pcall cannot catch the end and carry on, in a coroutine either.
  ran = Call(R"lua(
    local co = coroutine.wrap(function() while true do pcall(function() while true do end end) end end)
    while true do pcall(co) end
  )lua", limits);
  ASSERT_FALSE(ran.answer.ok());
}

TEST(LuaFunctionTest, LibraryLoopsThatMemoryDoesNotBoundAreBounded) {
  LuaLimits limits;
  limits.time = milliseconds(200);
  EXPECT_EQ(Eval(R"lua(string.rep("", 1e18), string.rep("ab", 3, "-"), ("x"):rep(0))lua"), R"lua(["","ab-ab-ab",""])lua");
  auto ran = Call("return {#table.move({}, 1, 1e15, 2)}", limits);
  ASSERT_FALSE(ran.answer.ok());
  EXPECT_EQ(ran.answer.error().message, "function t ran past its time limit");
  EXPECT_EQ(Eval(R"lua(table.move({1, 2, 3}, 1, 3, 2))lua"), "[[1,1,2,3]]");
  EXPECT_EQ(Eval(R"lua(table.move({1, 2, 3}, 2, 3, 1))lua"), "[[2,3,3]]");
  EXPECT_EQ(Eval(R"lua((function() local t = table.move({1, 2}, 1, 2, 3, {9}) return tostring(t[1]) .. tostring(t[2]) .. t[3] .. t[4] end)())lua"),
            R"lua(["9nil12"])lua");
  EXPECT_EQ(Eval(R"lua((function() local t = {5, 3, 9, 1} table.sort(t) return t end)())lua"), "[[1,3,5,9]]");
  EXPECT_EQ(Eval(R"lua((function() local t = {"b", "c", "a"} table.sort(t, function(a, b) return a > b end) return t end)())lua"),
            R"lua([["c","b","a"]])lua");
}

// Issue 31 #1: an error value whose fields run code is read without running it.
TEST(LuaFunctionTest, AnErrorValueWithMetamethodsCannotCrashTheProcess) {
  auto ran = Call(R"lua(error(setmetatable({}, {__index = function() error("boom") end})))lua");
  ASSERT_FALSE(ran.answer.ok());
  EXPECT_EQ(ran.answer.error().http_status, 500);
  EXPECT_EQ(ran.answer.error().message, "function t failed");
  ran = Call(R"lua(error(setmetatable({status = 409}, {__index = function() error("boom") end, __tostring = function() error("no") end})))lua");
  ASSERT_FALSE(ran.answer.ok());
  EXPECT_EQ(ran.answer.error().http_status, 409);
  ran = Call(R"lua(error({status = 418, error = "short and stout"}))lua");
  ASSERT_FALSE(ran.answer.ok());
  EXPECT_EQ(ran.answer.error().http_status, 418);
  EXPECT_EQ(ran.answer.error().message, "short and stout");
}

// Issue 31 #5: a table reached many times converts to JSON within the memory cap.
TEST(LuaFunctionTest, TheAnswersConversionIsWithinTheMemoryCap) {
  LuaLimits limits;
  limits.memory_bytes = 16u << 20;
  auto ran = Call(R"lua(local t = {x = 1} for i = 1, 30 do t = {a = t, b = t} end return t)lua", limits);
  ASSERT_FALSE(ran.answer.ok());
  EXPECT_EQ(ran.answer.error().message, "function t ran out of memory");
  // A crm call's body too.
  ran = Call(R"lua(local t = {x = 1} for i = 1, 30 do t = {a = t, b = t} end crm.create("Tasks", t))lua", limits);
  ASSERT_FALSE(ran.answer.ok());
  EXPECT_EQ(ran.answer.error().message, "function t ran out of memory");
  // What fits is answered whole.
  ran = Call(R"lua(local t = {x = 1} for i = 1, 8 do t = {a = t, b = t} end return t)lua", limits);
  ASSERT_TRUE(ran.answer.ok());
}

TEST(LuaFunctionTest, ACrmAnswerIsParsedOnlyWithinTheMemoryCap) {
  LuaHost host;
  const std::string big = R"({"results":[")" + std::string(8u << 20, 'x') + R"("]})";
  host.dispatch = [&](std::string_view, const std::string&, const json::value*) { return std::pair<int, std::string>{200, big}; };
  host.config_flag = [](std::string_view) { return false; };
  host.log = [](std::string_view) {};
  LuaLimits limits;
  limits.memory_bytes = 16u << 20;
  auto answer = RunLua("t", R"lua(return {#crm.find("Tasks")})lua", {}, nullptr, limits, host);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().message, "function t ran out of memory");
  limits.memory_bytes = 64u << 20;
  answer = RunLua("t", R"lua(return {#crm.find("Tasks")})lua", {}, nullptr, limits, host);
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(json::serialize(answer.value()), "[1]");
}

TEST(LuaFunctionTest, AStoreFaultInACrmCallIsThrownAgainOutsideTheInterpreter) {
  LuaHost host;
  host.dispatch = [](std::string_view, const std::string&, const json::value*) -> std::pair<int, std::string> {
    throw std::runtime_error("the store is gone");
  };
  host.config_flag = [](std::string_view) { return false; };
  host.log = [](std::string_view) {};
  EXPECT_THROW(RunLua("t", R"lua(pcall(crm.find, "Tasks") return crm.find("Tasks"))lua", {}, nullptr, {}, host),
               std::runtime_error);
}

// The bounded pattern functions against Lua's own, on random patterns and subjects made of the
// pieces the grammar has (issue 31 #4a): same results, same errors (without their position).
TEST(LuaPatternsTest, AgreesWithLuasLibraryOnRandomPatterns) {
  lua_State* L = luaL_newstate();
  ASSERT_NE(L, nullptr);
  luaL_openlibs(L);
  lua_newtable(L);
  OpenBoundedPatterns(L, [](lua_State*) {});  // `bounded` below: no limit to tick against
  lua_setglobal(L, "bounded");
  const char* harness = R"lua(
    local pieces = {"a", "b", ".", "%a", "%d", "%s", "%S", "[ab]", "[^a]", "[a-c]", "[%d ]", "*", "+", "-", "?",
                    "(", ")", "()", "%1", "%2", "%bab", "%f[a]", "%f[%s]", "^", "$", "%", "[", "]", "%.", "x"}
    local letters = {"a", "b", " ", "1", "(", ")", "x", "."}
    local seed = 12345
    local function rnd(n) seed = (seed * 1103515245 + 12345) % 2147483648 return seed % n + 1 end
    local function strip(e) return (tostring(e):gsub("^[^:]*:%d+: ", "")) end
    local function run(f, ...)
      local r = table.pack(pcall(f, ...))
      if not r[1] then return "error: " .. strip(r[2]) end
      local out = {}
      for i = 2, r.n do out[#out + 1] = tostring(r[i]) end
      return table.concat(out, "|")
    end
    local function collect(gmatch, s, p)
      local out = {}
      for a, b in gmatch(s, p) do out[#out + 1] = tostring(a) .. "," .. tostring(b) if #out > 50 then break end end
      return table.concat(out, ";")
    end
    local stock = {find = string.find, match = string.match, gmatch = string.gmatch, gsub = string.gsub}
    for case = 1, 20000 do
      local p, s = {}, {}
      for i = 1, rnd(6) do p[#p + 1] = pieces[rnd(#pieces)] end
      for i = 1, rnd(12) - 1 do s[#s + 1] = letters[rnd(#letters)] end
      p, s = table.concat(p), table.concat(s)
      local init = rnd(5) - 2
      for _, name in ipairs({"find", "match"}) do
        local want, got = run(stock[name], s, p, init), run(bounded[name], s, p, init)
        if want ~= got then return string.format("%s(%q, %q, %d): %s ~= %s", name, s, p, init, got, want) end
      end
      local want, got = run(collect, stock.gmatch, s, p), run(collect, bounded.gmatch, s, p)
      if want ~= got then return string.format("gmatch(%q, %q): %s ~= %s", s, p, got, want) end
      want, got = run(stock.gsub, s, p, "<%0>", rnd(4)), run(bounded.gsub, s, p, "<%0>", seed % 4 + 1)
      want = run(stock.gsub, s, p, "<%0>", seed % 4 + 1)
      if want ~= got then return string.format("gsub(%q, %q): %s ~= %s", s, p, got, want) end
      want, got = run(stock.find, s, p, init, true), run(bounded.find, s, p, init, true)
      if want ~= got then return string.format("plain find(%q, %q): %s ~= %s", s, p, got, want) end
    end
    return "same"
  )lua";
  ASSERT_EQ(luaL_dostring(L, harness), LUA_OK) << lua_tostring(L, -1);
  EXPECT_STREQ(lua_tostring(L, -1), "same");
  lua_close(L);
}

}  // namespace
}  // namespace crmd::functions
