// The official Couchbase Node.js SDK's KV range scans (collection.scan)
// against kvexec-server: the SDK creates one scan per vBucket
// (RANGE_SCAN_CREATE), continues each in batches and merges what they
// return. A scan must return every document in range exactly once.
//   node sdk_scan_test.js PORT
// Prints one "N passed, M failed" line; exits non-zero on any failure.
'use strict';
const assert = require('assert');
const couchbase = require('couchbase');
const { check, withCluster } = require('./sdk_check');

const [port] = process.argv.slice(2);
const TIMEOUTS = { connectTimeout: 20000, kvTimeout: 10000, kvScanTimeout: 20000 };
const USERS = 300;

const userKey = (i) => `user::${String(i).padStart(4, '0')}`;
const sortedIds = (results) => results.map((r) => r.id).sort();

async function scans(collection) {
  const writes = [];
  for (let i = 0; i < USERS; i++) {
    writes.push(collection.upsert(userKey(i), { n: i, name: `user ${i}` }));
  }
  for (let i = 0; i < 20; i++) {
    writes.push(collection.upsert(`order::${i}`, { order: i }));
  }
  await Promise.all(writes);

  await check('a prefix scan returns every document with the prefix once, with its content', async () => {
    const results = await collection.scan(new couchbase.PrefixScan('user::'));
    assert.strictEqual(results.length, USERS);
    assert.deepStrictEqual(sortedIds(results), Array.from({ length: USERS }, (_, i) => userKey(i)));
    for (const r of results) {
      assert.strictEqual(r.content.n, Number(r.id.slice(6)));
      assert.ok(r.cas, 'each document carries its CAS');
    }
  });

  await check('a range scan honours exclusive and inclusive ends', async () => {
    const results = await collection.scan(
      new couchbase.RangeScan(
        new couchbase.ScanTerm(userKey(10), true),
        new couchbase.ScanTerm(userKey(20))
      )
    );
    assert.deepStrictEqual(sortedIds(results), Array.from({ length: 10 }, (_, i) => userKey(11 + i)));
  });

  await check('an ids-only scan of the whole collection, in small batches', async () => {
    const results = await collection.scan(new couchbase.RangeScan(), {
      idsOnly: true,
      batchItemLimit: 7,
    });
    assert.strictEqual(results.length, USERS + 20);
    assert.strictEqual(new Set(results.map((r) => r.id)).size, USERS + 20, 'no repeats');
    for (const r of results) {
      assert.strictEqual(r.content, undefined, 'ids only: no content');
    }
  });

  await check('a sampling scan returns about as many documents as asked, all real', async () => {
    const results = await collection.scan(new couchbase.SamplingScan(40, 7));
    assert.ok(results.length > 0 && results.length <= 40, `${results.length} documents`);
    for (const r of results) {
      assert.ok(r.id.startsWith('user::') || r.id.startsWith('order::'), r.id);
      assert.ok(r.content !== undefined);
    }
    assert.strictEqual(new Set(results.map((r) => r.id)).size, results.length, 'no repeats');
  });

  await check('a scan after deletes does not return the deleted documents', async () => {
    await Promise.all([0, 1, 2].map((i) => collection.remove(userKey(i))));
    const results = await collection.scan(new couchbase.PrefixScan('user::'), { idsOnly: true });
    assert.strictEqual(results.length, USERS - 3);
    assert.ok(!results.some((r) => r.id === userKey(0)));
  });

  await check('a scan consistent with a mutation sees it', async () => {
    const written = await collection.upsert('user::zzzz', { n: -1 });
    const state = new couchbase.MutationState(written.token);
    const results = await collection.scan(new couchbase.PrefixScan('user::zzzz'), {
      consistentWith: state,
    });
    assert.deepStrictEqual(sortedIds(results), ['user::zzzz']);
  });

  await check('a scan of an empty range returns nothing', async () => {
    const results = await collection.scan(new couchbase.PrefixScan('nobody::'));
    assert.deepStrictEqual(results, []);
  });
}

async function namedCollection(bucket) {
  await check('a scan of a named collection sees only that collection', async () => {
    const manager = bucket.collections();
    await manager.createScope('app');
    await manager.createCollection('items', 'app');
    const items = bucket.scope('app').collection('items');
    await items.upsert('user::0001', { in: 'items' });
    const results = await items.scan(new couchbase.PrefixScan('user::'));
    assert.deepStrictEqual(results.map((r) => [r.id, r.content]), [['user::0001', { in: 'items' }]]);
  });

  await check('a sampling scan of an empty collection returns nothing', async () => {
    await bucket.collections().createCollection('empty', 'app');
    const empty = bucket.scope('app').collection('empty');
    await empty.upsert('gone', { n: 1 });  // waits until the SDK knows the collection
    await empty.remove('gone');
    assert.deepStrictEqual(await empty.scan(new couchbase.SamplingScan(10)), []);
  });
}

withCluster(port, TIMEOUTS, async (cluster) => {
  const bucket = cluster.bucket('default');
  await scans(bucket.defaultCollection());
  await namedCollection(bucket);
});
