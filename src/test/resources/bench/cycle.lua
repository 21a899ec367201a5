-- wrk script: POST /select_and_reserve with TOKENS token ids (default 4096), then
-- DELETE /reservations/{id} of the id it answered, as a gateway books and frees.
-- wrk keeps one Lua state per thread, not per connection, and does not say which request a
-- response answers: a thread queues the ids it is given and its next request, on whichever of its
-- connections is free, frees the oldest one (or books anew when none is waiting). A cycle is one
-- booking and the DELETE of its id; done() prints "cycles N" (DELETEs answered 200).
-- With BARE=1 (a server that answers {} to everything) a thread alternates the two requests
-- (DELETE /reservations/bare), so the receiver takes the same bodies in the same proportion and
-- cycles = responses / 2.
-- With SESSIONS=N (N > 0) every booking carries a session_id, s-1 .. s-N in turn per thread, so
-- each booking looks its session up and binds it (the node needs --session-affinity-ttl-secs).
local n = tonumber(os.getenv("TOKENS") or "4096")
local bare = os.getenv("BARE") == "1"
local sessions = tonumber(os.getenv("SESSIONS") or "0")
local ids = {}
for i = 1, n do ids[i] = tostring((i * 7919) % 50000) end
local tokens = '"token_ids":[' .. table.concat(ids, ",") .. ']}'
local reserves = {}
local booked = 0

-- built in init(), once wrk has set the Host header every request needs
function init(args)
  local headers = { ["Content-Type"] = "application/json" }
  if sessions > 0 then
    for s = 1, sessions do
      reserves[s] = wrk.format("POST", "/select_and_reserve", headers,
        '{"model_name":"default","routing_group":"default","session_id":"s-' .. s .. '",' .. tokens)
    end
  else
    reserves[1] = wrk.format("POST", "/select_and_reserve", headers,
      '{"model_name":"default","routing_group":"default",' .. tokens)
  end
end

local function reserve()
  booked = booked + 1
  return reserves[(booked - 1) % #reserves + 1]
end

local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

queue = {}
first, last = 1, 0
freed, turn = 0, 0

function request()
  if bare then
    turn = turn + 1
    if turn % 2 == 1 then return reserve() end
    return wrk.format("DELETE", "/reservations/bare")
  end
  if first <= last then
    local id = queue[first]
    queue[first] = nil
    first = first + 1
    return wrk.format("DELETE", "/reservations/" .. id)
  end
  return reserve()
end

function response(status, headers, resp)
  if bare then return end
  local id = resp and string.match(resp, '"selection_id"%s*:%s*"([^"]+)"')
  if id and status == 200 then
    last = last + 1
    queue[last] = id
  elseif status == 200 then
    freed = freed + 1
  end
end

function done(summary, latency, requests)
  local cycles = 0
  for _, t in ipairs(threads) do
    cycles = cycles + (t:get("freed") or 0)
  end
  if bare then cycles = math.floor(summary.requests / 2) end
  io.write(string.format("cycles %d\n", cycles))
end
