--[[
  once: add one job to a BullMQ queue, atomically, or find it there.

  Written for once from BullMQ's documented Redis layout (a job is a hash
  under <prefix>:<queue>:<jobId>; waiting ids sit in the "wait" list, or in
  the "prioritized" sorted set; a "marker" sorted set wakes the workers; the
  "events" stream tells QueueEvents listeners), and checked against a stock
  BullMQ Worker by the tests. It does only what an outbox event needs: a
  custom job id, no delay, no parent, no deduplication options.

  KEYS[1]  job hash          <prefix>:<queue>:<jobId>
  KEYS[2]  meta hash         <prefix>:<queue>:meta
  KEYS[3]  wait list         <prefix>:<queue>:wait
  KEYS[4]  prioritized zset  <prefix>:<queue>:prioritized
  KEYS[5]  priority counter  <prefix>:<queue>:pc
  KEYS[6]  marker zset       <prefix>:<queue>:marker
  KEYS[7]  active list       <prefix>:<queue>:active
  KEYS[8]  events stream     <prefix>:<queue>:events

  ARGV[1]  job id (the outbox event id)
  ARGV[2]  job name (the event type)
  ARGV[3]  job data, JSON
  ARGV[4]  job options, JSON
  ARGV[5]  timestamp, milliseconds since the epoch
  ARGV[6]  priority, 0 for none
  ARGV[7]  the meta "version" prefix once accepts, e.g. "bullmq:6."

  Returns 1 when the job was added, 0 when a job with that id exists (a
  republished event: the first job stands, nothing is written but a
  "duplicated" event). Fails with "ONCE_UNVERIFIED_LAYOUT <version>" when
  the queue was set up by a BullMQ version once has not been checked with,
  before writing anything.
]]
local jobKey, metaKey, waitKey, prioritizedKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local counterKey, markerKey, activeKey, eventsKey = KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local jobId, name, priority = ARGV[1], ARGV[2], tonumber(ARGV[6])

-- A Queue of another major version may read jobs differently: refuse.
local version = redis.call("HGET", metaKey, "version")
if version and string.sub(version, 1, #ARGV[7]) ~= ARGV[7] then
  return redis.error_reply("ONCE_UNVERIFIED_LAYOUT " .. version)
end

-- The events stream is capped at the queue's own setting, as BullMQ does.
local maxEvents = redis.call("HGET", metaKey, "opts.maxLenEvents")
if not maxEvents then
  maxEvents = 10000
  redis.call("HSET", metaKey, "opts.maxLenEvents", maxEvents)
end

-- The job id is the outbox event id: an existing job is this event,
-- published before a Dispatcher crashed. It is not added twice.
if redis.call("EXISTS", jobKey) == 1 then
  redis.call("XADD", eventsKey, "MAXLEN", "~", maxEvents, "*", "event", "duplicated", "jobId", jobId)
  return 0
end

redis.call("HSET", jobKey, "name", name, "data", ARGV[3], "opts", ARGV[4],
  "timestamp", ARGV[5], "delay", 0, "priority", priority)
redis.call("XADD", eventsKey, "MAXLEN", "~", maxEvents, "*", "event", "added", "jobId", jobId, "name", name)

if priority > 0 then
  -- Lower priority first; among equals, first come first served: the
  -- counter orders jobs within one priority.
  local seq = redis.call("INCR", counterKey)
  redis.call("ZADD", prioritizedKey, priority * 0x100000000 + seq % 0x100000000, jobId)
else
  -- Workers take from the right: LPUSH keeps the queue first in, first out.
  redis.call("LPUSH", waitKey, jobId)
end

-- Wake a blocked worker, unless the queue is paused or already runs as
-- many jobs as its global concurrency allows (the worker that frees a
-- slot moves on to the next job itself).
local paused, concurrency = unpack(redis.call("HMGET", metaKey, "paused", "concurrency"))
if not paused and not (concurrency and redis.call("LLEN", activeKey) >= tonumber(concurrency)) then
  redis.call("ZADD", markerKey, 0, "0")
end

redis.call("XADD", eventsKey, "MAXLEN", "~", maxEvents, "*", "event", "waiting", "jobId", jobId)
return 1
