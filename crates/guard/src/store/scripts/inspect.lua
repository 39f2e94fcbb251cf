local rec = redis.call('HMGET', KEYS[1], 'state', 'attempt', 'fence', 'expire')
if not rec[1] or tonumber(rec[4]) <= now then return {} end
return {rec[1], rec[2], rec[3]}
