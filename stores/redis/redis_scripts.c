/*
 * redis_scripts.c — the Lua that runs inside Redis.
 *
 * Redis runs a script from start to end before anything else, so a script is
 * the atomic step of the lease and script strategies.  Every script reads the
 * clock with TIME, inside Redis: instances never compare clocks.  Numbers go
 * back to Redis through num(), because Lua 5.1's tostring() would turn a
 * 15-digit slot into "2.534023008e+14".
 *
 * The lease claim is the lease stores' claim table; core/lease.c is the only other copy,
 * and test/redis replays the same rows against both.  The outcome and check
 * codes the scripts return are Lua constants (WON, CHECK_RUNNING, ...) made
 * from the lists that define an_outcome and an_check_state (core/anarchon.h).
 *
 * Lease keys: KEYS[1] the run (hash: state, attempt, token, lease_until,
 * claimed_at, finished_at), KEYS[2] the job's live set (slot -> lease end),
 * KEYS[3] the job's history stream.  keep_ms (an_settings_retention_ms) is how
 * long after max(slot, lease end) a run is kept: past it, no claim can ask.
 * The live set and the history are one key each per job and trim themselves
 * (ZREMRANGEBYSCORE of ended leases on every new lease; XADD MINID), so they
 * carry no expiry: every Redis call in the claim costs throughput.
 *
 * How long a run is kept is the store's, not the winner's (hosts may differ
 * during a rolling change): KEYS[5], the job's memory (a hash: keep_ms, the
 * longest keep_ms any claim has asked for; horizon; raised_at), and KEYS[6],
 * the job's kept set (slot -> the time its run is kept until, its promise).
 * A claim keeps its run max(own keep_ms, recorded keep_ms).  A claim that
 * asks for more raises the record: every promise still ahead is lengthened
 * to slot + the new keep_ms, and horizon becomes max(horizon, now - the old
 * keep_ms).  A run forgotten before that raise had a promise P with
 * slot <= P - keep_ms(P) <= horizon; one forgotten since, slot <= now - keep_ms,
 * which is late for every host.  So a slot at or below horizon with no run
 * may have been won and forgotten, and a first claim of it answers late.
 * doc/architecture.md ("Settings that differ between hosts") has the argument.
 *
 * Every claim script also reads the job's marker (redis_mark.c) first and
 * refuses a job another strategy decides; a win marks the job as this
 * strategy's, in the same script, so no second strategy can slip in between.
 *
 * And before that, every claim script reads the job's pause,
 * <prefix>:{<job>}:paused (redis_pause.c: its layout and value are
 * 0.1.0's, which GETs it before its own script), and answers paused
 * without deciding anything while it exists: a claim is one round trip,
 * and a pause written before the script runs is always seen.  The key
 * carries the job's hash tag, so a Redis Cluster has it on the job's node.
 */
#include "redis.h"

/* "local WON = 0\n" ...: the C enums' names and values, as Lua constants. */
#define LUA_CONSTANT_(name, value) "local " #name " = " #value "\n"
#define OUTCOMES AN_OUTCOME_LIST(LUA_CONSTANT_)
#define CHECKS AN_CHECK_LIST(LUA_CONSTANT_)
#define SCANS RDS_SCAN_LIST(LUA_CONSTANT_)

#define CLOCK \
	"local t = redis.call('TIME')\n" \
	"local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"

#define PRELUDE CLOCK \
	"local function num(n) return string.format('%d', n) end\n"

/*
 * One prefix, one strategy (redis_mark.c).  other(key, mine): the refusal
 * {MARKED, value, PTTL} when the job's marker names another strategy, else
 * nil.  mark(key, mine, slot, keep_ms), after a win: the marker is this
 * store's and lives at least until max(now, slot) + keep_ms.  Its expiry is
 * never brought nearer, and a marker without one (set by hand) gets none.
 */
_Static_assert(RDS_MARKED == -1, "the Lua constant MARKED below is -1");
#define MARKER \
	"local MARKED = -1\n" \
	"local function other(key, mine)\n" \
	"  local m = redis.call('GET', key)\n" \
	"  if m and m ~= mine then return {MARKED, m, redis.call('PTTL', key)} end\n" \
	"  return nil\n" \
	"end\n" \
	"local function mark(key, mine, slot, keep_ms)\n" \
	"  local want = math.max(now, slot) + keep_ms\n" \
	"  local left = redis.call('PTTL', key)\n" \
	"  if left == -2 then redis.call('SET', key, mine, 'PXAT', num(want))\n" \
	"  elseif left >= 0 and now + left < want then redis.call('PEXPIREAT', key, num(want)) end\n" \
	"end\n"

/*
 * The job's pause (redis_pause.c).  paused(key, code): nil when the key does
 * not exist (a pause with an end expires at it, PXAT, on Redis's clock),
 * {code, 0, 0} when it holds "<since>:<until>", {BAD_PAUSE, 0, 0} when it
 * holds anything else.  Checked first, as the hosts checked it before the
 * claim when it was a read of its own: a paused job answers paused whatever
 * else holds.
 */
_Static_assert(RDS_BAD_PAUSE == -3, "the Lua constant BAD_PAUSE below is -3");
#define PAUSE \
	"local BAD_PAUSE = -3\n" \
	"local function paused(key, code)\n" \
	"  local p = redis.call('GET', key)\n" \
	"  if not p then return nil end\n" \
	"  if not string.match(p, '^%d+:%d+$') then return {BAD_PAUSE, 0, 0} end\n" \
	"  return {code, 0, 0}\n" \
	"end\n"

/* Append an event of the run to the history, trimmed to what can be asked about. */
#define HISTORY \
	"local function history(event, slot, attempt, token, keep_ms)\n" \
	"  redis.call('XADD', KEYS[3], 'MINID', '~', num(math.max(0, now - keep_ms)), '*',\n" \
	"             'event', event, 'slot', slot, 'attempt', num(attempt), 'token', token)\n" \
	"end\n"

/*
 * KEYS[4]: the job's marker, KEYS[5] its memory, KEYS[6] its kept set,
 * KEYS[7] its pause.  ARGV: slot, token, lease_ms, max_late_ms, attempts,
 * overlap (1 skip, 0 allow, 2 replace), this host's keep_ms, the store's
 * marker value and how long past its slot a win keeps the marker (with this
 * host's keep_ms), '1' to answer {PAUSED, 0, 0} while the job is paused ('0'
 * for a run-now, which a pause does not hold).
 *
 * A run written by 0.1.0 (no field 'promise') was kept on its winner's
 * settings alone and is in no kept set: when it would be forgotten while this
 * host could still claim its slot, the claim answers {OLD_RUN, expiry} and the
 * host refuses (redis_lease.c), until the older hosts are gone.
 *
 * Overlap 'replace' ends, with the win, the runs 'skip' would have waited
 * for: the live set's members whose lease holds at now.  Their run keys are
 * made from KEYS[1] (the same job, so the same hash tag and cluster slot)
 * with the member's slot in place of this one.
 */
_Static_assert(RDS_OLD_RUN == -2, "the Lua constant OLD_RUN below is -2");
const rds_script rds_lua_lease_claim = {0, "the lease claim script", PRELUDE MARKER PAUSE HISTORY OUTCOMES
	"local OLD_RUN = -2\n"
	"if ARGV[10] == '1' then\n"
	"  local p = paused(KEYS[7], PAUSED)\n"
	"  if p then return p end\n"
	"end\n"
	"local refused = other(KEYS[4], ARGV[8])\n"
	"if refused then return refused end\n"
	"local slot, token = tonumber(ARGV[1]), ARGV[2]\n"
	"local lease_ms, own_keep = tonumber(ARGV[3]), tonumber(ARGV[7])\n"
	"local base = string.sub(KEYS[1], 1, #KEYS[1] - #ARGV[1])\n"
	"local mem = redis.call('HMGET', KEYS[5], 'keep_ms', 'horizon')\n"
	"local keep_ms, horizon = tonumber(mem[1]), tonumber(mem[2]) or 0\n"
	/* No memory yet: a new job, or one of 0.1.0's, whose hosts had to agree. */
	"if not keep_ms then\n"
	"  keep_ms = own_keep\n"
	"  redis.call('HSET', KEYS[5], 'keep_ms', num(keep_ms), 'horizon', '0', 'raised_at', num(now))\n"
	"elseif own_keep > keep_ms then\n"
	"  horizon = math.max(horizon, now - keep_ms)\n"
	"  local kept = redis.call('ZRANGEBYSCORE', KEYS[6], num(now), '+inf', 'WITHSCORES')\n"
	"  for i = 1, #kept, 2 do\n"
	"    local want = tonumber(kept[i]) + own_keep\n"
	"    if want > tonumber(kept[i + 1]) then\n"
	"      redis.call('PEXPIREAT', base .. kept[i], num(want), 'GT')\n"
	"      redis.call('HSET', base .. kept[i], 'promise', num(want))\n"
	"      redis.call('ZADD', KEYS[6], num(want), kept[i])\n"
	"    end\n"
	"  end\n"
	"  keep_ms = own_keep\n"
	"  redis.call('HSET', KEYS[5], 'keep_ms', num(keep_ms), 'horizon', num(horizon), 'raised_at', num(now))\n"
	"end\n"
	"local mark_keep = tonumber(ARGV[9]) - own_keep + keep_ms\n"
	"local function replace_others()\n"
	"  for _, s in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], num(now), '+inf')) do\n"
	"    local old = redis.call('HMGET', base .. s, 'state', 'attempt', 'token', 'lease_until')\n"
	"    if s ~= ARGV[1] and old[1] == 'running' and tonumber(old[4]) >= now then\n"
	"      redis.call('HSET', base .. s, 'state', 'replaced', 'finished_at', num(now))\n"
	"      redis.call('ZREM', KEYS[2], s)\n"
	"      history('replaced', s, tonumber(old[2]), old[3], keep_ms)\n"
	"    end\n"
	"  end\n"
	"end\n"
	"local function take(attempt)\n"
	"  local lease_until = now + lease_ms\n"
	"  local promise = math.max(slot, lease_until) + keep_ms\n"
	"  mark(KEYS[4], ARGV[8], slot, mark_keep)\n"
	"  if ARGV[6] == '2' then replace_others() end\n"
	"  redis.call('HSET', KEYS[1], 'state', 'running', 'attempt', num(attempt), 'token', token,\n"
	"             'lease_until', num(lease_until), 'claimed_at', num(now), 'promise', num(promise))\n"
	"  redis.call('PEXPIREAT', KEYS[1], num(promise))\n"
	"  redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', '(' .. num(now))\n"
	"  redis.call('ZADD', KEYS[6], num(promise), ARGV[1])\n"
	"  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. num(now))\n"
	"  redis.call('ZADD', KEYS[2], num(lease_until), ARGV[1])\n"
	"  history('won', ARGV[1], attempt, token, keep_ms)\n"
	"  return {WON, attempt, lease_until}\n"
	"end\n"
	"local run = redis.call('HMGET', KEYS[1], 'state', 'attempt', 'token', 'lease_until', 'promise')\n"
	"if not run[1] then\n"
	"  if now - slot > tonumber(ARGV[4]) or slot <= horizon then return {LATE, 0, 0} end\n"
	"  if ARGV[6] == '1' then\n"
	/* Two members at most: one of them could be this slot's stale entry. */
	"    local live = redis.call('ZRANGEBYSCORE', KEYS[2], num(now), '+inf', 'LIMIT', 0, 2)\n"
	"    for _, s in ipairs(live) do\n"
	"      if s ~= ARGV[1] then return {OVERLAP, 0, 0} end\n"
	"    end\n"
	"  end\n"
	"  return take(1)\n"
	"end\n"
	"if not run[5] then\n"
	"  local expiry = redis.call('PEXPIRETIME', KEYS[1])\n"
	"  if expiry >= 0 and expiry <= slot + tonumber(ARGV[4]) then return {OLD_RUN, expiry, 0} end\n"
	"end\n"
	"local attempt, lease_until = tonumber(run[2]), tonumber(run[4])\n"
	"if run[1] ~= 'running' then return {DONE, attempt, lease_until} end\n"
	"if run[3] == token then return {WON, attempt, lease_until} end\n"
	"if lease_until >= now then return {RUNNING, attempt, lease_until} end\n"
	"if attempt < tonumber(ARGV[5]) then return take(attempt + 1) end\n"
	"redis.call('HSET', KEYS[1], 'state', 'interrupted', 'finished_at', num(now))\n"
	"redis.call('ZREM', KEYS[2], ARGV[1])\n"
	"history('interrupted', ARGV[1], attempt, run[3], keep_ms)\n"
	"return {DONE, attempt, lease_until}\n"
};

/*
 * ARGV: slot, token, lease_ms, keep_ms.  Returns {owned, lease_until}.
 *
 * A heartbeat renews only a lease that still holds at now: one that arrives
 * after its lease ended (sent late, or sent before and queued in a frozen
 * server while its owner gave up) is refused like a lost run, even with the
 * run's token and no takeover yet.  Its owner may already have stopped its
 * command; renewing would keep the run "running" with nobody running it and
 * hold the backups off for another lease.  lease_until >= now is the same
 * test that makes a run "running" in the claim and the check.  Same keys,
 * arguments and answer as before (0.1.0's script, which renewed an ended
 * lease): hosts of both versions share the runs.
 */
const rds_script rds_lua_lease_heartbeat = {1, "the lease heartbeat script", PRELUDE
	"local run = redis.call('HMGET', KEYS[1], 'state', 'token', 'lease_until')\n"
	"if run[1] ~= 'running' or run[2] ~= ARGV[2] then return {0, 0} end\n"
	"if tonumber(run[3]) < now then return {0, 0} end\n"
	"local lease_until = now + tonumber(ARGV[3])\n"
	"local keep_ms = tonumber(ARGV[4])\n"
	"redis.call('HSET', KEYS[1], 'lease_until', num(lease_until))\n"
	"redis.call('PEXPIREAT', KEYS[1], num(math.max(tonumber(ARGV[1]), lease_until) + keep_ms), 'GT')\n"
	"redis.call('ZADD', KEYS[2], num(lease_until), ARGV[1])\n"
	"return {1, lease_until}\n"
};

/*
 * ARGV: slot, token, status, keep_ms.  Returns 1 when the token owned the run;
 * a finish sent again after its reply was lost finds its own status: 1 too.
 */
const rds_script rds_lua_lease_finish = {2, "the lease finish script", PRELUDE HISTORY
	"local run = redis.call('HMGET', KEYS[1], 'state', 'token', 'attempt')\n"
	"if run[2] ~= ARGV[2] then return 0 end\n"
	"if run[1] == ARGV[3] then return 1 end\n"
	"if run[1] ~= 'running' then return 0 end\n"
	"redis.call('HSET', KEYS[1], 'state', ARGV[3], 'finished_at', num(now))\n"
	"redis.call('ZREM', KEYS[2], ARGV[1])\n"
	"history(ARGV[3], ARGV[1], tonumber(run[3]), ARGV[2], tonumber(ARGV[4]))\n"
	"return 1\n"
};

/* No ARGV; reads only.  Returns {an_check_state, attempt, lease_until}. */
const rds_script rds_lua_lease_check = {3, "the lease check script", CLOCK CHECKS
	"local run = redis.call('HMGET', KEYS[1], 'state', 'attempt', 'lease_until')\n"
	"if not run[1] then return {CHECK_NONE, 0, 0} end\n"
	"local a, l = tonumber(run[2]), tonumber(run[3])\n"
	"local codes = {succeeded = CHECK_SUCCEEDED, failed = CHECK_FAILED, interrupted = CHECK_INTERRUPTED,\n"
	"               replaced = CHECK_REPLACED}\n"
	"if run[1] == 'running' then\n"
	"  if l >= now then return {CHECK_RUNNING, a, l} end\n"
	"  return {CHECK_EXPIRED, a, l}\n"
	"end\n"
	"return {codes[run[1]] or CHECK_NONE, a, l}\n"
};

/*
 * The script strategy, and the look-up of a claim on idmp's stream.
 * KEYS[1] the job's runs stream, KEYS[2] its marker and KEYS[3] its pause
 * (claim only).  ARGV: slot, token, window_ms, max_late_ms, mode ('claim' or
 * 'find'), the store's marker value and how long past its slot a win keeps
 * the marker.  Entries are (slot, S, token, T), in that order.  Returns
 * {SCAN_FOUND, token} when the slot has an entry in the last window_ms,
 * {SCAN_NONE} for none (find), {SCAN_LATE} and {SCAN_APPENDED} (claim); a
 * claim of a paused job, {SCAN_PAUSED, 0, 0}; a claim of a job another
 * strategy decides, {MARKED, value, PTTL}.
 */
const rds_script rds_lua_scan = {4, "the script strategy's scan", PRELUDE MARKER PAUSE SCANS
	"if ARGV[5] == 'claim' then\n"
	"  local p = paused(KEYS[3], SCAN_PAUSED)\n"
	"  if p then return p end\n"
	"  local refused = other(KEYS[2], ARGV[6])\n"
	"  if refused then return refused end\n"
	"end\n"
	"local lo = num(math.max(0, now - tonumber(ARGV[3])))\n"
	"local hi = '+'\n"
	"while true do\n"
	"  local batch = redis.call('XREVRANGE', KEYS[1], hi, lo, 'COUNT', 256)\n"
	"  for _, e in ipairs(batch) do\n"
	"    local f = e[2]\n"
	"    if f[1] == 'slot' and f[2] == ARGV[1] then return {SCAN_FOUND, f[4]} end\n"
	"  end\n"
	"  if #batch < 256 then break end\n"
	"  hi = '(' .. batch[#batch][1]\n"
	"end\n"
	"if ARGV[5] ~= 'claim' then return {SCAN_NONE} end\n"
	"if now - tonumber(ARGV[1]) > tonumber(ARGV[4]) then return {SCAN_LATE} end\n"
	"redis.call('XADD', KEYS[1], 'MINID', '~', lo, '*', 'slot', ARGV[1], 'token', ARGV[2])\n"
	"mark(KEYS[2], ARGV[6], tonumber(ARGV[1]), tonumber(ARGV[7]))\n"
	"return {SCAN_APPENDED}\n"
};

/*
 * idmp (Redis 8.6): configure a job's stream once, when it is created.
 * XCFGSET clears the stream's idempotency map, so it must never run on a
 * stream in use: only the instance that creates the stream configures it.
 * ARGV: duration_sec, maxsize.
 */
const rds_script rds_lua_idmp_setup = {5, "the idmp stream set-up script",
	"if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end\n"
	"redis.call('XADD', KEYS[1], '*', 'anarchon', 'idmp stream')\n"
	"redis.call('XCFGSET', KEYS[1], 'IDMP-DURATION', ARGV[1], 'IDMP-MAXSIZE', ARGV[2])\n"
	"return 1\n"
};

/*
 * stream-id: XADD with the slot as the entry's id, which Redis refuses for an
 * id not above the stream's top; refused, the slot's own entry says whose it
 * is.  A script so that the pause and the marker are read, and the marker
 * set, in the same step.  KEYS[1] the job's runs stream, KEYS[2] its
 * marker, KEYS[3] its pause.  ARGV: slot, token, the entry's id, the
 * store's marker value, how long past its slot a win keeps the marker.
 * Returns {SCAN_APPENDED}, {SCAN_FOUND, token} (the slot's entry),
 * {SCAN_LATE} (refused, and the slot has no entry: older than the stream's
 * top), {SCAN_PAUSED, 0, 0} or {MARKED, value, PTTL}.
 */
const rds_script rds_lua_stream_id_claim = {6, "the stream-id claim script", PRELUDE MARKER PAUSE SCANS
	"local p = paused(KEYS[3], SCAN_PAUSED)\n"
	"if p then return p end\n"
	"local refused = other(KEYS[2], ARGV[4])\n"
	"if refused then return refused end\n"
	"local added = redis.pcall('XADD', KEYS[1], ARGV[3], 'slot', ARGV[1], 'token', ARGV[2])\n"
	"if type(added) == 'table' and added.err then\n"
	"  if not string.find(added.err, 'equal or smaller', 1, true) then return added end\n"
	"  local e = redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1], 'COUNT', 1)\n"
	"  if #e == 0 then return {SCAN_LATE} end\n"
	"  local f = e[1][2]\n"
	"  if f[3] ~= 'token' or not f[4] then\n"
	"    return redis.error_reply('an entry in the job runs stream was not written by anarchon')\n"
	"  end\n"
	"  return {SCAN_FOUND, f[4]}\n"
	"end\n"
	"mark(KEYS[2], ARGV[4], tonumber(ARGV[1]), tonumber(ARGV[5]))\n"
	"return {SCAN_APPENDED}\n"
};

/*
 * The marker alone, for what runs no claim script of its own (idmp's XADD,
 * recall).  KEYS[1] the job's marker; KEYS[2], when given (before an idmp
 * claim), its pause.  ARGV: the store's marker value, how long past the
 * slot a win keeps it, the slot, '1' to mark the job as this store's
 * (before an idmp claim) or '0' to only look.  Returns {0}, {SCAN_PAUSED,
 * 0, 0} (and marks nothing) or {MARKED, value, PTTL}.
 */
const rds_script rds_lua_mark = {7, "the strategy marker script", PRELUDE MARKER PAUSE SCANS
	"if #KEYS > 1 then\n"
	"  local p = paused(KEYS[2], SCAN_PAUSED)\n"
	"  if p then return p end\n"
	"end\n"
	"local refused = other(KEYS[1], ARGV[1])\n"
	"if refused then return refused end\n"
	"if ARGV[4] == '1' then mark(KEYS[1], ARGV[1], tonumber(ARGV[3]), tonumber(ARGV[2])) end\n"
	"return {0}\n"
};
