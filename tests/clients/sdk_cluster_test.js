// The official Couchbase Node.js SDK against a three-node kvexec cluster
// (tools/cluster-run --nodes 3 --replicas 1): it bootstraps from any one
// node, learns all three and the map with one replica per vBucket, and
// CRUD of 200 keys routes by the map (a node that is not a key's active
// answers NOT_MY_VBUCKET, so a success is a write or read on the active).
// Non-durable only: durable writes need DCP to the replicas.
//   node sdk_cluster_test.js PORT0 PORT1 PORT2
// Prints one "N passed, M failed" line; exits non-zero on any failure.
'use strict';
const assert = require('assert');
const couchbase = require('couchbase');
const { check, expectError, fail, finish } = require('./sdk_check');

const ports = process.argv.slice(2).map(Number);
const KEYS = 200;
const TIMEOUTS = { connectTimeout: 20000, kvTimeout: 10000 };

async function connect(port) {
  const cluster = await couchbase.connect(`couchbase://127.0.0.1:${port}`, {
    username: process.env.KVEXEC_USER || 'Administrator',
    password: process.env.KVEXEC_PASSWORD || 'password',
    timeouts: TIMEOUTS,
  });
  const bucket = cluster.bucket('default');
  return { cluster, bucket, collection: bucket.defaultCollection() };
}

function keys() {
  return Array.from({ length: KEYS }, (_, i) => `cluster-key-${i}`);
}

// The SDK pings every KV node of the map it holds: all three, by port,
// once its connections to them are up (polled against a deadline).
async function expectThreeKvNodes(bucket) {
  const deadline = Date.now() + TIMEOUTS.connectTimeout;
  for (;;) {
    const ping = await bucket.ping({ serviceTypes: [couchbase.ServiceType.KeyValue] });
    const kv = ping.services.kv || [];
    const remotes = new Set(kv.map((endpoint) => Number(String(endpoint.remote).split(':').pop())));
    const up = kv.every((endpoint) => endpoint.state === couchbase.PingState.Ok);
    const expected = JSON.stringify([...ports].sort());
    if (up && JSON.stringify([...remotes].sort()) === expected) return;
    assert.ok(Date.now() < deadline, `not all three KV nodes answer: ${JSON.stringify(kv)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function main() {
  const first = await connect(ports[0]);
  const last = await connect(ports[2]);
  try {
    await check('bootstrapped from one node, the SDK knows all three', async () => {
      await expectThreeKvNodes(first.bucket);
      await expectThreeKvNodes(last.bucket);
    });
    await check(`upsert of ${KEYS} keys through the first node's map`, async () => {
      await Promise.all(keys().map((key, i) => first.collection.upsert(key, { i, key })));
    });
    await check(`get of the ${KEYS} keys through the last node's map`, async () => {
      const results = await Promise.all(keys().map((key) => last.collection.get(key)));
      results.forEach((result, i) => assert.deepStrictEqual(result.content, { i, key: keys()[i] }));
    });
    await check('replace with CAS, then a stale CAS is refused', async () => {
      const got = await first.collection.get('cluster-key-7');
      await last.collection.replace('cluster-key-7', { replaced: true }, { cas: got.cas });
      await expectError(first.collection.replace('cluster-key-7', { stale: true }, { cas: got.cas }),
                        couchbase.CasMismatchError);
      assert.deepStrictEqual((await first.collection.get('cluster-key-7')).content, { replaced: true });
    });
    await check(`remove of the ${KEYS} keys, then none is found`, async () => {
      await Promise.all(keys().map((key) => last.collection.remove(key)));
      for (const key of keys()) {
        await expectError(first.collection.get(key), couchbase.DocumentNotFoundError);
      }
    });
  } catch (e) {
    fail('setup', e);
  } finally {
    await first.cluster.close();
    await last.cluster.close();
  }
  finish();
}

main().catch((e) => {
  fail('connect', e);
  finish();
});
