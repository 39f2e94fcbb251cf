local rec = redis.call('HMGET', KEYS[1], 'state', 'attempt')
if rec[1] ~= 'in_progress' or rec[2] ~= ARGV[1] then return 0 end
if ARGV[2] == 'success' then
    redis.call('HSET', KEYS[1], 'state', 'completed')
else
    redis.call('DEL', KEYS[1])
    redis.call('ZREM', KEYS[2], ARGV[3])
end
return 1
