// Scopes and collections on a three-node kvexec cluster (one replica), as
// a Couchbase user meets them: made through any node's REST endpoint (two
// nodes at once among them), they are one manifest, the same on every node
// as soon as the change is answered; the official Node.js SDK then uses
// the collections on every node (CRUD routed by the map, durable writes
// that the replica must take, replica reads), and a collection dropped on
// one node is gone on all. The bucket manager reads the bucket's three
// nodes and one replica, and its flush empties every node.
//   node sdk_cluster_collections_test.js KV_PORT MGMT_PORT0 MGMT_PORT1 MGMT_PORT2
// Prints one "N passed, M failed" line; exits non-zero on any failure.
'use strict';
const assert = require('assert');
const http = require('http');
const couchbase = require('couchbase');
const { check, expectError, withCluster } = require('./sdk_check');

const [kvPort, ...mgmtPorts] = process.argv.slice(2).map(Number);
const TIMEOUTS = { connectTimeout: 20000, kvTimeout: 10000, managementTimeout: 20000 };
const AUTH = 'Basic ' + Buffer.from('Administrator:password').toString('base64');
const SCOPES = '/pools/default/buckets/default/scopes';
const KEYS = 64; // over every vBucket's active, so every node

// One REST request to node `mgmtPort`: { status, body }.
function rest(mgmtPort, method, path, form) {
  const body = form ? new URLSearchParams(form).toString() : '';
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: mgmtPort, method, path, headers: {
        Authorization: AUTH,
        'Content-Type': 'application/x-www-form-urlencoded',
        'Content-Length': Buffer.byteLength(body),
      } },
      (res) => {
        let text = '';
        res.on('data', (chunk) => { text += chunk; });
        res.on('end', () => resolve({ status: res.statusCode, body: text }));
      });
    req.on('error', reject);
    req.end(body);
  });
}

async function expectStatus(promise, status) {
  const reply = await promise;
  assert.strictEqual(reply.status, status, reply.body);
  return reply;
}

// Every node's manifest, which must be one.
async function manifests() {
  const replies = await Promise.all(mgmtPorts.map((p) => expectStatus(rest(p, 'GET', SCOPES), 200)));
  return replies.map((reply) => JSON.parse(reply.body));
}

// The copies of `key` that getAllReplicas finds (the active's included).
async function replicaCopies(collection, key) {
  try {
    return (await collection.getAllReplicas(key)).length;
  } catch (e) {
    if (e instanceof couchbase.DocumentNotFoundError ||
        e instanceof couchbase.DocumentUnretrievableError) return 0;
    throw e;
  }
}

withCluster(kvPort, TIMEOUTS, async (cluster) => {
  const bucket = cluster.bucket('default');
  await check("the bucket manager sees the cluster's three nodes' bucket with one replica",
              async () => {
    const settings = await cluster.buckets().getBucket('default');
    assert.strictEqual(settings.numReplicas, 1);
    const reply = await expectStatus(rest(mgmtPorts[2], 'GET', '/pools/default/buckets/default'), 200);
    const nodes = JSON.parse(reply.body).nodes;
    const portOf = (n) => Number(n.hostname.split(':').pop());
    assert.deepStrictEqual(nodes.map(portOf).sort(), [...mgmtPorts].sort(), JSON.stringify(nodes));
    assert.deepStrictEqual(nodes.filter((n) => n.thisNode).map(portOf), [mgmtPorts[2]]);
    assert.ok(nodes.some((n) => n.ports.direct === kvPort), JSON.stringify(nodes));
  });
  await check('a scope made on one node, two collections on two others at once', async () => {
    await expectStatus(rest(mgmtPorts[1], 'POST', SCOPES, { name: 'app' }), 200);
    const [orders, carts] = await Promise.all([
      expectStatus(rest(mgmtPorts[0], 'POST', `${SCOPES}/app/collections`, { name: 'orders' }), 200),
      expectStatus(rest(mgmtPorts[2], 'POST', `${SCOPES}/app/collections`, { name: 'carts' }), 200),
    ]);
    assert.notStrictEqual(JSON.parse(orders.body).uid, JSON.parse(carts.body).uid);
  });
  await check('every node holds the same manifest once the changes are answered', async () => {
    // Answered once every node said so, or after 5 s (a loaded machine):
    // polled, with a deadline, for the second case.
    const deadline = Date.now() + 10000;
    let all = await manifests();
    while (all.some((manifest) => JSON.stringify(manifest) !== JSON.stringify(all[0]))) {
      assert.ok(Date.now() < deadline, JSON.stringify(all));
      await new Promise((resolve) => setTimeout(resolve, 50));
      all = await manifests();
    }
    assert.strictEqual(all[0].uid, '3');
    const app = all[0].scopes.find((s) => s.name === 'app');
    assert.ok(app, JSON.stringify(all[0]));
    const ids = app.collections.map((c) => c.uid).sort();
    assert.deepStrictEqual(ids, ['8', '9'], JSON.stringify(app));
  });
  await check('a name taken through another node is refused (CollectionExistsError)', async () => {
    await expectStatus(rest(mgmtPorts[1], 'POST', `${SCOPES}/app/collections`, { name: 'orders' }), 400);
    await expectError(bucket.collections().createCollection('carts', 'app'),
                      couchbase.CollectionExistsError);
  });

  const orders = bucket.scope('app').collection('orders');
  const keys = Array.from({ length: KEYS }, (_, i) => `order-${i}`);
  await check('CRUD in the collection on every node, durable at Majority', async () => {
    for (const key of keys) {
      await orders.upsert(key, { key }, { durabilityLevel: couchbase.DurabilityLevel.Majority });
    }
    for (const key of keys) assert.deepStrictEqual((await orders.get(key)).content, { key });
    await expectError(bucket.scope('app').collection('carts').get(keys[0]),
                      couchbase.DocumentNotFoundError);
  });
  await check("the replicas hold the collection's documents (getAllReplicas)", async () => {
    for (const key of keys.slice(0, 16)) {
      const copies = await orders.getAllReplicas(key);
      assert.strictEqual(copies.length, 2, `${key}: ${copies.length} copies`);
      for (const copy of copies) assert.deepStrictEqual(copy.content, { key });
    }
  });
  await check("the bucket manager's flush empties every node, replicas too", async () => {
    const plain = bucket.defaultCollection();
    for (const key of keys) await plain.upsert(key, { key });
    await cluster.buckets().flushBucket('default');
    for (const key of keys) {
      await expectError(plain.get(key), couchbase.DocumentNotFoundError);
      await expectError(orders.get(key), couchbase.DocumentNotFoundError);
    }
    // The replicas take the actives' deletions from their streams.
    const deadline = Date.now() + TIMEOUTS.kvTimeout;
    for (const key of keys.slice(0, 16)) {
      while ((await replicaCopies(plain, key)) > 0) {
        assert.ok(Date.now() < deadline, `${key} is still on a replica`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    await plain.upsert(keys[0], { after: 'flush' });  // the bucket takes writes again
    assert.deepStrictEqual((await plain.get(keys[0])).content, { after: 'flush' });
  });
  await check('a collection dropped through one node is gone on every node', async () => {
    await expectStatus(rest(mgmtPorts[2], 'DELETE', `${SCOPES}/app/collections/orders`), 200);
    for (const manifest of await manifests()) {
      const app = manifest.scopes.find((s) => s.name === 'app');
      assert.deepStrictEqual(app.collections.map((c) => c.name), ['carts']);
    }
    for (const key of keys.slice(0, 8)) {
      await expectError(orders.get(key), couchbase.CollectionNotFoundError);
    }
  });
});
