// Lua scripts run by EVALSHA (loaded on first use; NOSCRIPT after a restart, or on another
// cluster master, loads them again).
// Every key a script touches is passed in KEYS, so they run on a Redis Cluster too.
import { RedisReplyError, type RedisCommander, type SendOptions } from "./commander.js";

/** A script with its SHA1, loaded lazily per connection. */
export class Script {
  private sha: string | undefined;
  constructor(private readonly source: string) {}

  /** Runs the script with `keys` and `args`. */
  async run(
    redis: RedisCommander,
    keys: readonly string[],
    args: readonly (string | Uint8Array)[],
    options: SendOptions = {},
  ): Promise<unknown> {
    // On a cluster each master has its own script cache: the load goes where the keys live.
    const route = { route: keys[0] };
    this.sha ??= String(await redis.send(["SCRIPT", "LOAD", this.source], route));
    try {
      return await redis.send(["EVALSHA", this.sha, String(keys.length), ...keys, ...args], options);
    } catch (error) {
      if (!(error instanceof RedisReplyError) || !/NOSCRIPT/.test(error.message)) throw error;
      this.sha = String(await redis.send(["SCRIPT", "LOAD", this.source], route));
      return redis.send(["EVALSHA", this.sha, String(keys.length), ...keys, ...args], options);
    }
  }
}

/**
 * Time window: KEYS[1] the current slice, KEYS[2..] the other live slices; ARGV: k, count,
 * expire-at (ms), mode, the slice's bytes, then count * k bit offsets. A key is seen when one
 * slice has all its bits. Mode 0 tests only; mode 1 (seen) sets the bits of a key no older slice
 * has in the current slice, and it counts as seen when they all were set already; mode 2 (add)
 * sets every key's bits in the current slice, refreshing its age, with the same answer. A
 * recording call creates a missing current slice at its full size in one allocation (see
 * PREALLOCATE). Returns one 0/1 per key.
 */
export const WINDOW_SEEN = new Script(`
local k = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local record = ARGV[4] ~= '0'
local refresh = ARGV[4] == '2'
if record and redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SETRANGE', KEYS[1], tonumber(ARGV[5]) - 1, '\\0') end
local out = {}
for i = 0, n - 1 do
  local base = 5 + i * k
  local found = 0
  for s = (record and 2 or 1), #KEYS do
    local all = 1
    for j = 1, k do
      if redis.call('GETBIT', KEYS[s], ARGV[base + j]) == 0 then all = 0 break end
    end
    if all == 1 then found = 1 break end
  end
  if record and (found == 0 or refresh) then
    local fresh = 0
    for j = 1, k do
      if redis.call('SETBIT', KEYS[1], ARGV[base + j], 1) == 0 then fresh = 1 end
    end
    if fresh == 0 then found = 1 end
  end
  out[i + 1] = found
end
if record then redis.call('PEXPIREAT', KEYS[1], ARGV[3]) end
return out
`);

/**
 * Counting filter remove: KEYS[1] the shard; ARGV: k, count, then count * k u4 offsets. A key is
 * removed only when all its counters are non-zero; saturated counters (15) never move. Returns
 * one 0/1 per key (1: removed).
 */
export const COUNTING_REMOVE = new Script(`
local k = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local out = {}
for i = 0, n - 1 do
  local base = 2 + i * k
  local ok = 1
  for j = 1, k do
    if redis.call('BITFIELD_RO', KEYS[1], 'GET', 'u4', ARGV[base + j])[1] == 0 then ok = 0 break end
  end
  if ok == 1 then
    for j = 1, k do
      local v = redis.call('BITFIELD_RO', KEYS[1], 'GET', 'u4', ARGV[base + j])[1]
      if v < 15 then redis.call('BITFIELD', KEYS[1], 'SET', 'u4', ARGV[base + j], v - 1) end
    end
  end
  out[i + 1] = ok
end
return out
`);

/** Exact store remove: KEYS[1] the bucket hash; ARGV the fingerprints. Drops one reference each; returns the counts left (-1: absent). */
export const STORE_REMOVE = new Script(`
local out = {}
for i = 1, #ARGV do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 0 then
    out[i] = -1
  else
    local left = redis.call('HINCRBY', KEYS[1], ARGV[i], -1)
    if left <= 0 then redis.call('HDEL', KEYS[1], ARGV[i]) left = 0 end
    out[i] = left
  end
end
return out
`);

/** Keys' sizes in one round trip: KEYS the hashes (one slot); returns the sum of their HLENs. */
export const HLEN_SUM = new Script(`
local n = 0
for i = 1, #KEYS do n = n + redis.call('HLEN', KEYS[i]) end
return n
`);

/** Deletes KEYS (one slot) in one round trip, in DELs of at most 4,096 keys (Lua's unpack has a stack limit). */
export const DEL_ALL = new Script(`
for i = 1, #KEYS, 4096 do redis.call('DEL', unpack(KEYS, i, math.min(i + 4095, #KEYS))) end
return #KEYS
`);

/**
 * IMP-CB in Redis: KEYS[1] the counting shard, KEYS[2] the fingerprint bucket, KEYS[3] the
 * filter's description; ARGV: field (the fingerprint), the description the caller mapped with,
 * then the key's k counter offsets ("#i"). The counters are trusted only while the description in
 * Redis is that one. A zero counter inserts with HSETNX, which never overwrites a count: if the
 * store had the key anyway (a filter that missed it), its reference is counted as usual and the
 * filter learns it. Otherwise the store decides (HINCRBY). A new key, or a missed one, raises its
 * counters once (OVERFLOW SAT). Returns {references, looked up (0/1), missed by the filter (0/1)}.
 */
export const IMPCB_CHECK = new Script(`
local trusted = redis.call('GET', KEYS[3]) == ARGV[2]
local zero = false
if trusted then
  for j = 3, #ARGV do
    if redis.call('BITFIELD_RO', KEYS[1], 'GET', 'u4', ARGV[j])[1] == 0 then zero = true break end
  end
end
local count
local missed = 0
if zero and redis.call('HSETNX', KEYS[2], ARGV[1], 1) == 1 then
  count = 1
else
  count = redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
  if zero then missed = 1 end
end
if trusted and (count == 1 or missed == 1) then
  for j = 3, #ARGV do redis.call('BITFIELD', KEYS[1], 'OVERFLOW', 'SAT', 'INCRBY', 'u4', ARGV[j], 1) end
end
return {count, zero and 0 or 1, missed}
`);

/**
 * Blocked Bloom filter in binary: KEYS[1] the shard; ARGV: k, mode (1 add, 0 test), then one
 * binary string of records, each the key's block (u32 LE) and its k bit offsets in the block
 * (u16 LE, 0..511, least significant bit of each byte first, as in memory). A key's 64-byte block
 * is read once (GETRANGE); an add ORs its bits into those bytes and writes the block back with one
 * SETRANGE (measured 2x the keys/s of one SETBIT a bit at k = 14, the same bytes). Returns one
 * character per key: "1" when all its bits were set.
 */
export const BLOCKED_BATCH = new Script(`
local k = tonumber(ARGV[1])
local add = ARGV[2] == '1'
local p = ARGV[3]
local n = #p / (4 + 2 * k)
local out = {}
local pos = 1
for i = 1, n do
  local block
  block, pos = struct.unpack('<I4', p, pos)
  local bytes = redis.call('GETRANGE', KEYS[1], block * 64, block * 64 + 63)
  local offsets = {}
  local all = true
  for j = 1, k do
    local off
    off, pos = struct.unpack('<I2', p, pos)
    offsets[j] = off
    if all then
      local byte = string.byte(bytes, bit.rshift(off, 3) + 1) or 0
      if bit.band(byte, bit.lshift(1, bit.band(off, 7))) == 0 then all = false end
    end
  end
  if all then
    out[i] = '1'
  else
    out[i] = '0'
    if add then
      local t = {string.byte(bytes, 1, 64)}
      for b = #t + 1, 64 do t[b] = 0 end
      for j = 1, k do
        local off = offsets[j]
        local b = bit.rshift(off, 3) + 1
        t[b] = bit.bor(t[b], bit.lshift(1, bit.band(off, 7)))
      end
      redis.call('SETRANGE', KEYS[1], block * 64, string.char(unpack(t)))
    end
  end
end
return table.concat(out)
`);

/**
 * Creates KEYS[1] as ARGV[1] zero bytes unless it exists: one allocation of the exact size. Bit
 * commands grow a string by doubling while it is under 1 MB, so a shard filled bit by bit ends
 * up to twice its size (measured 2.3x for 1.6 KB shards); an existing shard is left untouched.
 */
export const PREALLOCATE = new Script(`
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SETRANGE', KEYS[1], tonumber(ARGV[1]) - 1, '\\0') end
return 1
`);

/**
 * MinHash representative append: KEYS[1] a shard's band hash; ARGV[1] records of 15 bytes: the
 * band field (6 bytes), a document's 8-byte id hash, and how many ids the caller read in the
 * field before (0-255); ARGV[2] the most ids a field keeps. A field's value is its representatives'
 * id hashes, in order, at most ARGV[2] of them, so each record costs the same whatever was
 * stored. The id is appended when absent and the field has room; each record returns the ids
 * that came after the caller's read and before the document's own (the others' representatives
 * it has not verified yet): the check and the append are one step, and a record sent again
 * answers as the first time.
 */
export const MINHASH_APPEND = new Script(`
local p = ARGV[1]
local room = tonumber(ARGV[2]) * 8
local out = {}
for i = 0, #p / 15 - 1 do
  local at = i * 15
  local field = string.sub(p, at + 1, at + 6)
  local id = string.sub(p, at + 7, at + 14)
  local v = redis.call('HGET', KEYS[1], field) or ''
  local stop = #v
  for j = 1, #v, 8 do
    if string.sub(v, j, j + 7) == id then
      stop = j - 1
      break
    end
  end
  if stop == #v and #v < room then redis.call('HSET', KEYS[1], field, v .. id) end
  out[i + 1] = string.sub(v, string.byte(p, at + 15) * 8 + 1, stop)
end
return out
`);

/**
 * Windowed exact set, one batch of one shard group: KEYS the group's shard hashes the batch
 * names; ARGV: mode, now in seconds ("" reads the server's TIME, so a fleet with skewed clocks
 * agrees), the longest TTL in seconds (-1: some key never expires), then one binary string of
 * 22-byte records: the shard's index in KEYS (u16 LE), the 12-byte field, the key's TTL in
 * seconds (u32 LE, 0: never) and the latest time its host or prefix was forgotten (u32 LE, 0:
 * never). A key is held when its field's time t is at least its cutoff, the later of now - TTL + 1
 * and forgotten + 1. Modes: "a" add (first-seen: a held key keeps t), "r" add refreshing t to now,
 * "h" held, "d" due (not held), "x" remove (answers held), each one character "0"/"1" a record;
 * "t" answers t where held, else -1. An add records max(now, cutoff), so a key added in the second
 * its host was forgotten is held. A new field that brings its hash to 96 fields, and every 32
 * more, sweeps the hash of fields older than now - longest + 1 (expired for every TTL): Redis 7.0
 * has no hash-field expiry, and the hashes stay small enough for the compact listpack encoding.
 */
export const WINDOWED_BATCH = new Script(`
local mode = ARGV[1]
local now = tonumber(ARGV[2]) or tonumber(redis.call('TIME')[1])
local longest = tonumber(ARGV[3])
local p = ARGV[4]
local add = mode == 'a' or mode == 'r'
local out = {}
local function sweep(key)
  local all = redis.call('HGETALL', key)
  local gone = {}
  local below = now - longest + 1
  for j = 1, #all, 2 do
    if tonumber(all[j + 1]) < below then gone[#gone + 1] = all[j] end
  end
  for j = 1, #gone, 4096 do redis.call('HDEL', key, unpack(gone, j, math.min(j + 4095, #gone))) end
end
local pos = 1
for i = 1, #p / 22 do
  local k, field, ttl, forgotten
  k, field, ttl, forgotten, pos = struct.unpack('<I2c12I4I4', p, pos)
  local key = KEYS[k]
  local cutoff = 0
  if ttl > 0 then cutoff = now - ttl + 1 end
  if forgotten > 0 and forgotten + 1 > cutoff then cutoff = forgotten + 1 end
  local v = redis.call('HGET', key, field)
  local t = v and tonumber(v) or nil
  local held = t ~= nil and t >= cutoff
  if mode == 't' then
    out[i] = held and t or -1
  elseif mode == 'h' then
    out[i] = held and '1' or '0'
  elseif mode == 'd' then
    out[i] = held and '0' or '1'
  elseif mode == 'x' then
    if t ~= nil then redis.call('HDEL', key, field) end
    out[i] = held and '1' or '0'
  elseif held then
    if mode == 'r' and now > t then redis.call('HSET', key, field, now) end
    out[i] = '0'
  else
    redis.call('HSET', key, field, math.max(now, cutoff))
    if t == nil and longest >= 0 then
      local n = redis.call('HLEN', key)
      if n >= 96 and (n - 96) % 32 == 0 then sweep(key) end
    end
    out[i] = '1'
  end
end
if mode == 't' then return out end
return table.concat(out)
`);

/**
 * Forgets a host or URL prefix: KEYS[1] the tombstone hash (pattern -> time), KEYS[2] its version
 * counter; ARGV: the pattern, now in seconds ("" reads TIME), the longest TTL (-1: never). Records
 * pattern -> now, drops tombstones no key can be older than (time <= now - longest: every key's
 * own TTL has passed since), bumps the version so every process reads the tombstones again, and
 * returns the new version.
 */
export const FORGET = new Script(`
local now = tonumber(ARGV[2]) or tonumber(redis.call('TIME')[1])
local longest = tonumber(ARGV[3])
-- The later of the two, as the memory and disk sets keep it (a clock given may go back).
local was = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
redis.call('HSET', KEYS[1], ARGV[1], math.max(was, now))
if longest >= 0 then
  local all = redis.call('HGETALL', KEYS[1])
  for j = 1, #all, 2 do
    if tonumber(all[j + 1]) <= now - longest then redis.call('HDEL', KEYS[1], all[j]) end
  end
end
return redis.call('INCR', KEYS[2])
`);

/** The tombstones and their version in one atomic read: KEYS[1] the hash, KEYS[2] the version; returns {version, HGETALL}. */
export const FORGOTTEN_READ = new Script(`
return {redis.call('GET', KEYS[2]) or '0', redis.call('HGETALL', KEYS[1])}
`);
