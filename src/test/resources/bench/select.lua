-- wrk script: POST a /select body with TOKENS token ids (default 4096), as a gateway would.
local n = tonumber(os.getenv("TOKENS") or "4096")
local ids = {}
for i = 1, n do ids[i] = tostring((i * 7919) % 50000) end
wrk.method = "POST"
wrk.path = os.getenv("SELECT_PATH") or "/select"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model_name":"default","routing_group":"default","token_ids":[' .. table.concat(ids, ",") .. ']}'
