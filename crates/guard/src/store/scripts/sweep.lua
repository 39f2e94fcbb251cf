local function sweep(index, prefix)
    local members = redis.call('ZRANGEBYSCORE', index, '-inf', fmt(now), 'LIMIT', 0, tonumber(ARGV[1]))
    local n = 0
    for _, m in ipairs(members) do
        local exp = redis.call('HGET', prefix .. m, 'expire')
        if not exp then
            redis.call('ZREM', index, m)
        elseif tonumber(exp) <= now then
            redis.call('DEL', prefix .. m)
            redis.call('ZREM', index, m)
            n = n + 1
        else
            redis.call('ZADD', index, exp, m)
        end
    end
    return n
end
return {sweep(KEYS[1], ARGV[2]), sweep(KEYS[2], ARGV[3])}
