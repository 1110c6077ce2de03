-- A token bucket for a fleet-wide ceiling, taken in leases. KEYS[1]: the bucket (a hash).
-- ARGV: rate (tokens per second), burst (tokens), wanted (tokens), ttl (milliseconds).
-- Returns {granted, wait}: tokens granted now (maybe fewer than wanted) and, when fewer,
-- microseconds until the bucket could hold the rest. Redis's own clock (TIME), so the proxies
-- sharing the bucket need no synchronised clocks.
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local wanted = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil or ts == nil then
  tokens = burst
  ts = now
end
if now > ts then
  tokens = math.min(burst, tokens + (now - ts) * rate / 1000000)
  ts = now
end
local granted = math.min(wanted, math.floor(tokens))
if granted < 0 then
  granted = 0
end
tokens = tokens - granted
local wait = 0
if granted < wanted then
  wait = math.ceil((wanted - granted - tokens) * 1000000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(ts))
redis.call('PEXPIRE', KEYS[1], ttl)
return {granted, wait}
