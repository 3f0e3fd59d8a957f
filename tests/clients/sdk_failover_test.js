// The official Couchbase Node.js SDK through a cluster's life (issue 27):
// eight workers keep upserting their own keys at durability Majority on a
// three-node cluster with one replica while
// 1. node n0 is killed (SIGKILL): once its lease expires the others fail
//    it over, the replicas of its vBuckets are promoted and the SDK, told
//    NOT_MY_VBUCKET or polling the config, moves its writes there;
// 2. n0 is restarted on its data directory and rejoins, and
//    `kvexec-cluster rebalance` gives it its share back;
// 3. a fourth node n3 starts and a rebalance moves its share to it;
// 4. `kvexec-cluster remove n1` rebalances n1 out.
// Checks:
// - every key is written again after the kill, within 10 s of it (the
//   failover time printed is the longest a key waited);
// - the SDK saw only retriable errors (timeouts, ambiguous durability,
//   temporary failure);
// - at the end every key reads back as its last acknowledged write, or as
//   a later write whose outcome the SDK could not know (ambiguous);
// - each rebalance and the removal exit 0;
// - the nodes this script started stop cleanly (SIGTERM, exit 0).
//   node sdk_failover_test.js KVEXEC_CLUSTER ETCD_URL DIR N0_PID PORT0 PORT1 PORT2
'use strict';
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { spawn, spawnSync } = require('child_process');
const couchbase = require('couchbase');
const { check, fail, finish } = require('./sdk_check');

const [clusterToolPath, etcdUrl, dir, victimPidText, ...portTexts] = process.argv.slice(2);
const victimPid = Number(victimPidText);
const ports = portTexts.map(Number);
const WORKERS = 8;
const KEYS_PER_WORKER = 8;
const FAILOVER_DEADLINE_MS = 10000;
const TIMEOUTS = { connectTimeout: 20000, kvTimeout: 2500, kvDurableTimeout: 2500 };
const RETRIABLE = [
  couchbase.AmbiguousTimeoutError, couchbase.UnambiguousTimeoutError,
  couchbase.DurabilityAmbiguousError, couchbase.TemporaryFailureError,
  couchbase.DurableWriteInProgressError, couchbase.RequestCanceledError,
].filter(Boolean);
// The outcome is unknown: the write may have happened.
const AMBIGUOUS = [
  couchbase.AmbiguousTimeoutError, couchbase.DurabilityAmbiguousError,
  couchbase.RequestCanceledError,
].filter(Boolean);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const isA = (e, types) => types.some((type) => e instanceof type);

// One key's history as the SDK saw it.
class KeyLog {
  constructor(key) {
    this.key = key;
    this.acknowledged = null;  // { n, cas }
    this.ambiguousAfter = [];  // n of writes after it whose outcome is unknown
    this.successes = [];       // times (ms)
  }
}

async function worker(collection, logs, state) {
  let n = 0;
  while (!state.stop) {
    for (const log of logs) {
      if (state.stop) return;
      n++;
      try {
        const result = await collection.upsert(log.key, { key: log.key, n }, {
          durabilityLevel: couchbase.DurabilityLevel.Majority,
        });
        log.acknowledged = { n, cas: String(result.cas) };
        log.ambiguousAfter = [];
        log.successes.push(Date.now());
      } catch (e) {
        if (!isA(e, RETRIABLE)) {
          state.unexpected.push(`${log.key}: ${e.constructor.name}: ${e.message}`);
          continue;
        }
        state.retriable[e.constructor.name] = (state.retriable[e.constructor.name] || 0) + 1;
        if (isA(e, AMBIGUOUS)) log.ambiguousAfter.push(n);
        await sleep(50);
      }
    }
  }
}

// Starts the node again from its command line and waits for its ready line.
function restart(argv) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    const timer = setTimeout(() => reject(new Error(`not ready in 60 s: ${out}`)), 60000);
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('kvexec-server: ready on ')) {
        clearTimeout(timer);
        child.stdout.resume();
        resolve(child);
      }
    });
    child.on('exit', (code) => reject(new Error(`exited (${code}) before ready: ${out}`)));
  });
}

// kvexec-cluster ARGS...: its exit status (its output goes to ours).
function runClusterTool(...args) {
  const result = spawnSync(clusterToolPath, ['--etcd', etcdUrl, ...args],
                           { stdio: ['ignore', 'inherit', 'inherit'], timeout: 90000 });
  return result.status;
}

// n0's command line as another node's: its own name and data directory.
function argvOf(argv, name) {
  const copy = [...argv];
  copy[copy.indexOf('--node') + 1] = name;
  copy[copy.indexOf('--data-dir') + 1] = path.join(dir, name);
  return copy;
}

// Waits until the map names `node` and every node applied it.
async function waitInMap(node) {
  const deadline = Date.now() + 30000;
  for (;;) {
    const result = spawnSync(clusterToolPath, ['--etcd', etcdUrl, 'status', '--json'],
                             { encoding: 'utf8' });
    if (result.status === 0) {
      const status = JSON.parse(result.stdout);
      const applied = status.nodes.every((n) => !n.alive || n.appliedRevision === status.mapRevision);
      if (status.nodes.some((n) => n.name === node && n.alive && n.inMap) && applied) return;
    }
    assert.ok(Date.now() < deadline, `${node} never joined the map`);
    await sleep(200);
  }
}

function stopChild(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.on('exit', (code, signal) => resolve(code === null ? signal : code));
    child.kill('SIGTERM');
  });
}

async function main() {
  const argv = JSON.parse(fs.readFileSync(path.join(dir, 'n0.argv'), 'utf8'));
  // Bootstrap from the nodes that stay: the SDK learns n0 from the map.
  const cluster = await couchbase.connect(
    `couchbase://127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}`, {
      username: 'Administrator', password: 'password', timeouts: TIMEOUTS,
    });
  const collection = cluster.bucket('default').defaultCollection();
  const logs = Array.from({ length: WORKERS * KEYS_PER_WORKER },
                          (_, i) => new KeyLog(`failover-key-${i}`));
  const state = { stop: false, unexpected: [], retriable: {} };
  const workers = Array.from({ length: WORKERS }, (_, w) =>
    worker(collection, logs.slice(w * KEYS_PER_WORKER, (w + 1) * KEYS_PER_WORKER), state));
  const restarted = [];  // the nodes this script started
  try {
    await check('every key is written before the kill', async () => {
      const deadline = Date.now() + 30000;
      while (logs.some((log) => log.successes.length === 0)) {
        assert.ok(Date.now() < deadline, 'some keys were never written');
        await sleep(100);
      }
      await sleep(1000);
    });
    const killedAt = Date.now();
    process.kill(victimPid, 'SIGKILL');
    await check(`every key is written again within ${FAILOVER_DEADLINE_MS / 1000} s of the kill`,
                async () => {
                  const deadline = killedAt + 3 * FAILOVER_DEADLINE_MS;
                  const firstAfter = (log) => log.successes.find((t) => t > killedAt);
                  while (logs.some((log) => firstAfter(log) === undefined)) {
                    assert.ok(Date.now() < deadline, 'some keys were never written again');
                    await sleep(50);
                  }
                  const waits = logs.map((log) => firstAfter(log) - killedAt);
                  const longest = Math.max(...waits);
                  console.log(`failover: kill to the last key written again ${longest} ms; ` +
                              `median key ${waits.sort((a, b) => a - b)[waits.length >> 1]} ms`);
                  assert.ok(longest < FAILOVER_DEADLINE_MS, `a key waited ${longest} ms`);
                });
    await check('the killed node restarts on its data directory and rejoins', async () => {
      restarted.push(await restart(argv));
      await waitInMap('n0');
    });
    await check('a rebalance gives it its share back', async () => {
      assert.strictEqual(runClusterTool('rebalance'), 0);
      await sleep(1000);
    });
    await check('a fourth node joins and a rebalance gives it its share', async () => {
      restarted.push(await restart(argvOf(argv, 'n3')));
      await waitInMap('n3');
      assert.strictEqual(runClusterTool('rebalance'), 0);
      await sleep(1000);
    });
    await check('n1 is rebalanced out', async () => {
      assert.strictEqual(runClusterTool('remove', 'n1'), 0);
      await sleep(2000);  // the load goes on without it
    });
  } catch (e) {
    fail('load', e);
  }
  state.stop = true;
  await Promise.all(workers);
  await check('the SDK saw only retriable errors', async () => {
    console.log(`retriable errors: ${JSON.stringify(state.retriable)}`);
    assert.deepStrictEqual(state.unexpected.slice(0, 5), []);
  });
  await check('every key reads back as its last acknowledged write (or a later ambiguous one)',
              async () => {
                for (const log of logs) {
                  assert.ok(log.acknowledged, `${log.key}: never acknowledged`);
                  const got = await collection.get(log.key);
                  const n = got.content.n;
                  const allowed = [log.acknowledged.n, ...log.ambiguousAfter];
                  assert.ok(allowed.includes(n),
                            `${log.key}: read n=${n}, acknowledged ${log.acknowledged.n}, ` +
                            `ambiguous ${JSON.stringify(log.ambiguousAfter)}`);
                  if (n === log.acknowledged.n) {
                    assert.strictEqual(String(got.cas), log.acknowledged.cas, `${log.key}: CAS`);
                  }
                }
              });
  await cluster.close();
  await check('the nodes this script started stop cleanly', async () => {
    for (const child of restarted) {
      assert.strictEqual(await stopChild(child), 0);
    }
  });
  finish();
}

main().catch((e) => {
  fail('setup', e);
  finish();
});
