// Redis, with idem-guard's own keys and Lua scripts (crates/guard/src/store/
// redis.rs), so guards of every language on one server see each other's
// claims. Each operation is one script, which Redis runs without
// interleaving, and "now" is the server's TIME.
//
// Layout under a prefix P (idem-guard's default is "idem:guard:"): the record
// `P run:<key>` and fence watermark `P fence:<key>` are hashes;
// `P runs-by-expiry` and `P fences-by-expiry` are sorted sets by expire_at;
// a token binding `P token:<digest>` is a string with Redis's own expiry.

import { createHash } from "node:crypto";
import {
  type Claim,
  type ClaimOutcome,
  type ClaimTerms,
  type GuardStore,
  type HandlerOutcome,
  type RecordView,
  effectiveRetentionMs,
  micros,
  uuidv7,
} from "./store.js";

/** Records also get a native expiry this long after expire_at, so a deployment that never sweeps stays bounded. */
const BACKSTOP_MS = 60 * 60 * 1000;

const LUA_NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local function fmt(n) return string.format('%.0f', n) end
`;

const CLAIM = `
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
`;

const FINISH = `
local rec = redis.call('HMGET', KEYS[1], 'state', 'attempt')
if rec[1] ~= 'in_progress' or rec[2] ~= ARGV[1] then return 0 end
if ARGV[2] == 'success' then
    redis.call('HSET', KEYS[1], 'state', 'completed')
else
    redis.call('DEL', KEYS[1])
    redis.call('ZREM', KEYS[2], ARGV[3])
end
return 1
`;

const RENEW = `
local rec = redis.call('HMGET', KEYS[1], 'state', 'attempt', 'lease', 'expire')
if rec[1] ~= 'in_progress' or rec[2] ~= ARGV[1] or tonumber(rec[4]) <= now then return 0 end
local lease = math.max(tonumber(rec[3]), now + tonumber(ARGV[2]))
local expire = math.max(tonumber(rec[4]), now + tonumber(ARGV[3]))
redis.call('HSET', KEYS[1], 'lease', fmt(lease), 'expire', fmt(expire))
redis.call('PEXPIRE', KEYS[1], math.floor((expire - now) / 1000) + tonumber(ARGV[4]))
redis.call('ZADD', KEYS[2], fmt(expire), ARGV[5])
return 1
`;

const SWEEP = `
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
`;

const BIND_TOKEN = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return ARGV[1] end
return redis.call('GET', KEYS[1])
`;

const INSPECT = `
local rec = redis.call('HMGET', KEYS[1], 'state', 'attempt', 'fence', 'expire')
if not rec[1] or tonumber(rec[4]) <= now then return {} end
return {rec[1], rec[2], rec[3]}
`;

/** ioredis: `evalsha(sha, numKeys, ...keysAndArgs)`. */
export interface IoRedisLike {
  evalsha(sha: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>;
}

/** node-redis (`redis` on npm): `evalSha(sha, { keys, arguments })`. */
export interface NodeRedisLike {
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

export type RedisLike = IoRedisLike | NodeRedisLike;

class Script {
  readonly sha: string;
  constructor(readonly source: string) {
    this.sha = createHash("sha1").update(source).digest("hex");
  }
}

/** The scripts' text, as idem-guard's `crates/guard/src/store/scripts/*.lua` (a test compares). */
export const SCRIPT_TEXTS = {
  now: LUA_NOW,
  claim: CLAIM,
  finish: FINISH,
  renew: RENEW,
  sweep: SWEEP,
  bind_token: BIND_TOKEN,
  inspect: INSPECT,
};

const script = (body: string, withNow = true) => new Script(withNow ? `${LUA_NOW}${body}` : body);
const SCRIPTS = {
  claim: script(CLAIM),
  finish: script(FINISH, false),
  renew: script(RENEW),
  sweep: script(SWEEP),
  bindToken: script(BIND_TOKEN, false),
  inspect: script(INSPECT),
};

export class RedisGuardStore implements GuardStore {
  /**
   * A store on a connected ioredis or node-redis client, every key under
   * `prefix` ("idem:guard:" is idem-guard's and `idem proxy`'s). The scripts
   * name keys derived from the prefix: one server or a replica set, not Redis Cluster.
   */
  constructor(
    private readonly client: RedisLike,
    readonly prefix = "idem:guard:",
  ) {}

  private async run(s: Script, keys: string[], args: Array<string | number | bigint>): Promise<unknown> {
    const argv = args.map(String);
    const nodeRedis = typeof (this.client as NodeRedisLike).evalSha === "function";
    try {
      return nodeRedis
        ? await (this.client as NodeRedisLike).evalSha(s.sha, { keys, arguments: argv })
        : await (this.client as IoRedisLike).evalsha(s.sha, keys.length, ...keys, ...argv);
    } catch (error) {
      if (!String((error as Error)?.message ?? error).includes("NOSCRIPT")) throw error;
      // The script cache was flushed (or never held it): EVAL loads it.
      return nodeRedis
        ? await (this.client as NodeRedisLike).eval(s.source, { keys, arguments: argv })
        : await (this.client as IoRedisLike).eval(s.source, keys.length, ...keys, ...argv);
    }
  }

  private runKey(key: string) {
    return `${this.prefix}run:${key}`;
  }
  private fenceKey(key: string) {
    return `${this.prefix}fence:${key}`;
  }
  private get runsIndex() {
    return `${this.prefix}runs-by-expiry`;
  }
  private get fencesIndex() {
    return `${this.prefix}fences-by-expiry`;
  }

  async claim(key: string, terms: ClaimTerms): Promise<ClaimOutcome> {
    const attemptId = uuidv7();
    const reply = (await this.run(
      SCRIPTS.claim,
      [this.runKey(key), this.fenceKey(key), this.runsIndex, this.fencesIndex],
      [key, attemptId, micros(terms.leaseMs), micros(effectiveRetentionMs(terms)), BACKSTOP_MS],
    )) as string[];
    if (reply[0] === "completed") return { state: "completed" };
    if (reply[0] === "in_progress") return { state: "in_progress" };
    if (reply[0] === "claimed" && reply[1] !== undefined) {
      return { state: "claimed", claim: { key, attemptId, fence: BigInt(reply[1]) } };
    }
    throw new Error(`unexpected claim reply ${JSON.stringify(reply)}`);
  }

  async finish(claim: Claim, outcome: HandlerOutcome): Promise<boolean> {
    const changed = await this.run(SCRIPTS.finish, [this.runKey(claim.key), this.runsIndex], [claim.attemptId, outcome, claim.key]);
    return Number(changed) === 1;
  }

  async renew(claim: Claim, terms: ClaimTerms): Promise<boolean> {
    const renewed = await this.run(
      SCRIPTS.renew,
      [this.runKey(claim.key), this.runsIndex],
      [claim.attemptId, micros(terms.leaseMs), micros(effectiveRetentionMs(terms)), BACKSTOP_MS, claim.key],
    );
    return Number(renewed) === 1;
  }

  async bindToken(token: string, key: string, ttlMs: number): Promise<string> {
    // Rounded up, so a binding never ends before its token.
    const ttl = Math.max(1, Math.ceil(ttlMs));
    return String(await this.run(SCRIPTS.bindToken, [`${this.prefix}token:${token}`], [key, ttl]));
  }

  async inspect(key: string): Promise<RecordView | undefined> {
    const reply = (await this.run(SCRIPTS.inspect, [this.runKey(key)], [])) as string[];
    if (reply.length === 0) return undefined;
    return { state: reply[0] as RecordView["state"], attemptId: reply[1]!, fence: BigInt(reply[2]!) };
  }

  async sweep(limit: number): Promise<{ records: number; fences: number; tokens: number }> {
    const [records, fences] = (await this.run(
      SCRIPTS.sweep,
      [this.runsIndex, this.fencesIndex],
      [limit, `${this.prefix}run:`, `${this.prefix}fence:`],
    )) as number[];
    return { records: Number(records), fences: Number(fences), tokens: 0 };
  }
}
