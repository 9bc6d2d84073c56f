// A stock BullMQ Worker per queue, the way a Node.js team runs them, that
// reports every job it processed as one JSON line on stdout. The Go tests
// (testsupport/bullmqtest) start it against what once published and count
// the job ids: this worker, not our own reader, is the judge of the
// layout once writes.
//
// Settings come from the environment:
//   BULLMQTEST_REDIS_URL    once's ONCE_REDIS_URL: redis://host:port/db (a
//                           single node), redis+sentinel://host:port/db?
//                           master_name=name[&addr=host:port...] (ioredis
//                           with sentinels), or redis+cluster://host:port
//                           or redis://host:port?addr=host:port[&addr=...]
//                           (an ioredis Cluster, as BullMQ documents it)
//   BULLMQTEST_PREFIX       the BullMQ key prefix (once's ONCE_BULLMQ_PREFIX)
//   BULLMQTEST_QUEUES       queue names, comma-separated
//   BULLMQTEST_CONCURRENCY  jobs processed at once per queue (default 1)
//   BULLMQTEST_FAIL_FIRST   "1": throw on a job's first attempt, so BullMQ
//                           retries it with the job's own attempts/backoff
//   BULLMQTEST_OPEN_QUEUES  "1": also open a Queue per queue, as a producer
//                           would; it writes the queue's meta (version)
// Lines written: {"event":"ready"} once every worker is connected; then
// {"event":"job",...} per completed attempt and {"event":"failed",...} per
// failed one; {"event":"error",...} for worker errors. It stops cleanly
// when stdin closes or on SIGTERM.
import { Queue, Worker } from 'bullmq';
import IORedis from 'ioredis';

const env = process.env;
const queues = (env.BULLMQTEST_QUEUES || '').split(',').filter(Boolean);
if (!env.BULLMQTEST_REDIS_URL || !env.BULLMQTEST_PREFIX || queues.length === 0) {
  console.error('worker.mjs: BULLMQTEST_REDIS_URL, BULLMQTEST_PREFIX and BULLMQTEST_QUEUES are required');
  process.exit(2);
}
const concurrency = Number(env.BULLMQTEST_CONCURRENCY || '1');
const failFirst = env.BULLMQTEST_FAIL_FIRST === '1';

const say = (line) => process.stdout.write(JSON.stringify(line) + '\n');
const describe = (queue, job) => ({
  queue,
  id: job.id,
  name: job.name,
  data: job.data,
  opts: job.opts,
  priority: job.priority,
  timestamp: job.timestamp,
  attemptsMade: job.attemptsMade,
});

// connect opens the connection the URL names. BullMQ's Workers need
// maxRetriesPerRequest: null (they block on Redis and must not give up).
function connect(raw) {
  const url = new URL(raw);
  const hostPort = (s) => {
    const i = s.lastIndexOf(':');
    return { host: s.slice(0, i), port: Number(s.slice(i + 1)) };
  };
  const nodes = [hostPort(url.host), ...url.searchParams.getAll('addr').map(hostPort)];
  const auth = {
    username: decodeURIComponent(url.username) || undefined,
    password: decodeURIComponent(url.password) || undefined,
  };
  const tls = url.protocol.startsWith('rediss') ? {} : undefined;
  const db = Number(url.pathname.replace(/^\//, '') || '0');
  if (url.protocol === 'redis+sentinel:' || url.protocol === 'rediss+sentinel:') {
    return new IORedis({
      sentinels: nodes,
      name: url.searchParams.get('master_name'),
      db, ...auth, tls, maxRetriesPerRequest: null,
    });
  }
  if (url.protocol.endsWith('+cluster:') || url.searchParams.has('addr')) {
    return new IORedis.Cluster(nodes, { redisOptions: { ...auth, tls, maxRetriesPerRequest: null } });
  }
  return new IORedis(raw, { maxRetriesPerRequest: null });
}

const connection = connect(env.BULLMQTEST_REDIS_URL);
const workers = queues.map((queue) => {
  const worker = new Worker(
    queue,
    async (job) => {
      if (failFirst && job.attemptsMade === 0) {
        throw new Error('first attempt fails on purpose');
      }
      say({ event: 'job', ...describe(queue, job) });
      return 'ok';
    },
    { connection, prefix: env.BULLMQTEST_PREFIX, concurrency },
  );
  worker.on('failed', (job, err) => {
    if (job) say({ event: 'failed', reason: err.message, ...describe(queue, job) });
  });
  worker.on('error', (err) => say({ event: 'error', queue, message: String(err && err.message) }));
  return worker;
});

const producers = env.BULLMQTEST_OPEN_QUEUES === '1'
  ? queues.map((queue) => new Queue(queue, { connection, prefix: env.BULLMQTEST_PREFIX }))
  : [];

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  await Promise.all([...workers, ...producers].map((w) => w.close()));
  await connection.quit();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();

await Promise.all([...workers, ...producers].map((w) => w.waitUntilReady()));
// getVersion waits until the Queue wrote its meta hash.
await Promise.all(producers.map((q) => q.getVersion()));
say({ event: 'ready' });
