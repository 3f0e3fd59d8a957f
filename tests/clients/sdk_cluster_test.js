// The official Couchbase Node.js SDK against a three-node kvexec cluster
// (tools/cluster-run --nodes 3 --replicas 1): it bootstraps from any one
// node, learns all three and the map with one replica per vBucket, and
// CRUD of 200 keys routes by the map (a node that is not a key's active
// answers NOT_MY_VBUCKET, so a success is a write or read on the active).
// Then durable writes at the three levels, which the active acknowledges
// once its replica (over DCP) has the write, a durable replace and remove,
// and getAllReplicas (the replica read, GET_REPLICA to the replica's node)
// of every acknowledged Majority write: the active and the replica copy,
// same value and CAS. Last, a distributed transaction over keys of all
// three nodes: its staged inserts (tombstones with xattrs) and their
// revival reach the replicas.
//   node sdk_cluster_test.js PORT0 PORT1 PORT2
// With KVEXEC_TLS_CA set (sdk_cluster_tls_test.sh), the ports are the
// nodes' TLS ports: couchbases://, trusting that certificate.
// Prints one "N passed, M failed" line; exits non-zero on any failure.
'use strict';
const assert = require('assert');
const couchbase = require('couchbase');
const { check, expectError, fail, finish } = require('./sdk_check');

const ports = process.argv.slice(2).map(Number);
const KEYS = 200;
const TIMEOUTS = { connectTimeout: 20000, kvTimeout: 10000 };

const TLS_CA = process.env.KVEXEC_TLS_CA;

async function connect(port) {
  const scheme = TLS_CA ? 'couchbases' : 'couchbase';
  const cluster = await couchbase.connect(`${scheme}://127.0.0.1:${port}`, {
    username: process.env.KVEXEC_USER || 'Administrator',
    password: process.env.KVEXEC_PASSWORD || 'password',
    timeouts: TIMEOUTS,
    ...(TLS_CA ? { security: { trustStorePath: TLS_CA } } : {}),
  });
  const bucket = cluster.bucket('default');
  return { cluster, bucket, collection: bucket.defaultCollection() };
}

const DURABLE_KEYS = 50;
const LEVELS = [
  ['Majority', couchbase.DurabilityLevel.Majority],
  ['MajorityAndPersistOnMaster', couchbase.DurabilityLevel.MajorityAndPersistOnMaster],
  ['PersistToMajority', couchbase.DurabilityLevel.PersistToMajority],
];

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

// The active's copy and the replica's, once both hold `expected` with the
// CAS the write returned. The replica applies the commit just after the
// active acknowledges it, so a replica copy that is missing or older is
// polled again until the deadline; what was last seen goes in the failure.
async function expectReplicated(collection, key, expected, cas) {
  const deadline = Date.now() + TIMEOUTS.kvTimeout;
  let seen;
  for (;;) {
    try {
      const copies = await collection.getAllReplicas(key);
      seen = copies.map((copy) => ({
        isReplica: copy.isReplica, content: copy.content, cas: String(copy.cas),
      }));
      const matching = (copy) =>
        JSON.stringify(copy.content) === JSON.stringify(expected) && copy.cas === String(cas);
      const active = seen.filter((copy) => !copy.isReplica);
      const replica = seen.filter((copy) => copy.isReplica);
      if (seen.length === 2 && active.length === 1 && replica.length === 1 &&
          matching(active[0]) && matching(replica[0])) {
        return;
      }
    } catch (e) {
      seen = `${e.constructor.name}: ${e.message}`;
    }
    assert.ok(Date.now() < deadline,
              `${key}: expected the active and one replica at ${cas} holding ` +
              `${JSON.stringify(expected)}, last saw ${JSON.stringify(seen)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
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
    await check(`a prefix scan over the three nodes returns the ${KEYS} keys once each`, async () => {
      // One RANGE_SCAN_CREATE per vBucket, each sent to its active's node.
      const results = await last.collection.scan(new couchbase.PrefixScan('cluster-key-'));
      assert.deepStrictEqual(results.map((r) => r.id).sort(), keys().slice().sort());
    });
    await check(`remove of the ${KEYS} keys, then none is found`, async () => {
      await Promise.all(keys().map((key) => last.collection.remove(key)));
      for (const key of keys()) {
        await expectError(first.collection.get(key), couchbase.DocumentNotFoundError);
      }
    });
    const durable = {};  // level name -> [{ key, value, cas }]
    for (const [name, level] of LEVELS) {
      await check(`durable upsert (${name}) of ${DURABLE_KEYS} keys`, async () => {
        durable[name] = await Promise.all(
          Array.from({ length: DURABLE_KEYS }, async (_, i) => {
            const key = `durable-${name}-${i}`;
            const value = { i, level: name };
            const result = await first.collection.upsert(key, value, { durabilityLevel: level });
            return { key, value, cas: result.cas };
          }),
        );
      });
    }
    await check('durable replace and remove (Majority)', async () => {
      const key = 'durable-Majority-0';
      const got = await last.collection.get(key);
      const replaced = await last.collection.replace(key, { replaced: true }, {
        cas: got.cas, durabilityLevel: couchbase.DurabilityLevel.Majority,
      });
      await expectReplicated(first.collection, key, { replaced: true }, replaced.cas);
      await first.collection.remove(key, { durabilityLevel: couchbase.DurabilityLevel.Majority });
      await expectError(last.collection.get(key), couchbase.DocumentNotFoundError);
      const { value, cas } = await first.collection.upsert(key, { i: 0, level: 'Majority' }, {
        durabilityLevel: couchbase.DurabilityLevel.Majority,
      }).then((result) => ({ value: { i: 0, level: 'Majority' }, cas: result.cas }));
      durable.Majority[0] = { key, value, cas };
    });
    await check('getAllReplicas of every Majority write: active and replica, same value and CAS',
                async () => {
                  assert.ok(durable.Majority, 'no Majority writes to read back');
                  for (const { key, value, cas } of durable.Majority) {
                    await expectReplicated(last.collection, key, value, cas);
                  }
                });
    await check('lookupInAllReplicas and lookupInAnyReplica read the replica copy too',
                async () => {
                  const { key, value, cas } = durable.Majority[1];
                  const specs = [couchbase.LookupInSpec.get('level'),
                                 couchbase.LookupInSpec.get('i')];
                  const all = await last.collection.lookupInAllReplicas(key, specs);
                  assert.deepStrictEqual(all.map((r) => r.isReplica).sort(), [false, true]);
                  for (const copy of all) {
                    assert.deepStrictEqual(copy.content.map((entry) => entry.value),
                                           [value.level, value.i]);
                    assert.strictEqual(String(copy.cas), String(cas));
                  }
                  const any = await first.collection.lookupInAnyReplica(key, specs);
                  assert.deepStrictEqual(any.content.map((entry) => entry.value),
                                         [value.level, value.i]);
                  await expectError(first.collection.lookupInAllReplicas('no-such-key', specs),
                                    couchbase.DocumentNotFoundError);
                });
    await check('a transaction over keys of every node commits, on actives and replicas',
                async () => {
                  const txKeys = Array.from({ length: 12 }, (_, i) => `tx-cluster-${i}`);
                  await first.cluster.transactions().run(async (ctx) => {
                    for (const key of txKeys) await ctx.insert(first.collection, key, { key });
                  });
                  for (const key of txKeys) {
                    const got = await last.collection.get(key);
                    await expectReplicated(last.collection, key, { key }, got.cas);
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
