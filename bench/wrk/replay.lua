-- wrk script of bench/run: replays a request file, one request per line:
--   METHOD <TAB> PATH [<TAB> JSON BODY]
-- Every request is formatted once in init(), then served round-robin from BENCH_OFFSET on, so the
-- per-request cost inside wrk is a table lookup. The credentials (X-Parse-* headers, master key) come
-- from the environment; done() prints one machine-readable line for bench/side-by-side.mjs.
-- With BENCH_STATIC=1 the script defines no request(): wrk then sends the URL given on its command
-- line, without calling into Lua per request (plain `wrk URL`, only done() added).
--   BENCH_REQUESTS   request file            BENCH_OFFSET   first line to send (0-based)
--   BENCH_APP_ID     X-Parse-Application-Id  BENCH_MASTER_KEY  X-Parse-Master-Key

local requests, count, at = {}, 0, 0

local function headers(body)
  local h = {}
  for k, v in pairs(wrk.headers) do h[k] = v end
  h["X-Parse-Application-Id"] = os.getenv("BENCH_APP_ID")
  h["X-Parse-Master-Key"] = os.getenv("BENCH_MASTER_KEY")
  if body then h["Content-Type"] = "application/json" end
  return h
end

local static = os.getenv("BENCH_STATIC") == "1"

function init(args)
  if static then return end
  local file = os.getenv("BENCH_REQUESTS")
  for line in io.lines(file) do
    local method, path, body = line:match("^(%u+)\t([^\t]+)\t?(.*)$")
    if method == nil then error("bad request line: " .. line) end
    if body == "" then body = nil end
    count = count + 1
    requests[count] = wrk.format(method, path, headers(body), body)
  end
  if count == 0 then error("no requests in " .. file) end
  at = (tonumber(os.getenv("BENCH_OFFSET") or "0") or 0) % count
end

if not static then
  function request()
    at = at + 1
    if at > count then at = 1 end
    return requests[at]
  end
end

function done(summary, latency, _)
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
