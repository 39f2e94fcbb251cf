local rec = redis.call('HMGET', KEYS[1], 'state', 'attempt', 'lease', 'expire')
if rec[1] ~= 'in_progress' or rec[2] ~= ARGV[1] or tonumber(rec[4]) <= now then return 0 end
local lease = math.max(tonumber(rec[3]), now + tonumber(ARGV[2]))
local expire = math.max(tonumber(rec[4]), now + tonumber(ARGV[3]))
redis.call('HSET', KEYS[1], 'lease', fmt(lease), 'expire', fmt(expire))
redis.call('PEXPIRE', KEYS[1], math.floor((expire - now) / 1000) + tonumber(ARGV[4]))
redis.call('ZADD', KEYS[2], fmt(expire), ARGV[5])
return 1
