local rec = redis.call('HMGET', KEYS[1], 'state', 'lease', 'expire')
if rec[1] and tonumber(rec[3]) > now then
    if rec[1] == 'completed' then return {'completed'} end
    if tonumber(rec[2]) > now then return {'in_progress'} end
end
local expire = now + tonumber(ARGV[4])
local fence = now
local fence_expire = expire
local mark = redis.call('HMGET', KEYS[2], 'fence', 'expire')
if mark[1] then
    fence = math.max(tonumber(mark[1]) + 1, now)
    fence_expire = math.max(tonumber(mark[2]), expire)
end
if fence < 1 then fence = 1 end
local ttl = math.floor((fence_expire - now) / 1000) + tonumber(ARGV[5])
redis.call('HSET', KEYS[2], 'fence', fmt(fence), 'expire', fmt(fence_expire))
redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('ZADD', KEYS[4], fmt(fence_expire), ARGV[1])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'state', 'in_progress', 'attempt', ARGV[2], 'fence', fmt(fence),
    'lease', fmt(now + tonumber(ARGV[3])), 'expire', fmt(expire))
redis.call('PEXPIRE', KEYS[1], math.floor(tonumber(ARGV[4]) / 1000) + tonumber(ARGV[5]))
redis.call('ZADD', KEYS[3], fmt(expire), ARGV[1])
return {'claimed', fmt(fence)}
