// The official Couchbase Node.js SDK against kvexec-server: named
// collections used over KV (CRUD, sub-document, durability, maxExpiry,
// unknown and dropped names) after the SDK's collection manager made them
// (sdk_management_test.js tests the managers themselves). Two phases, with
// a restart of the server between them:
//   node sdk_collections_test.js PORT create   (make app.orders, write)
//   node sdk_collections_test.js PORT restarted (it is all still there)
// Prints one "N passed, M failed" line; exits non-zero on any failure.
'use strict';
const assert = require('assert');
const couchbase = require('couchbase');
const { check, expectError, withCluster } = require('./sdk_check');

const [port, phase] = process.argv.slice(2);
const TIMEOUTS = { connectTimeout: 20000, kvTimeout: 10000, managementTimeout: 20000 };
const { LookupInSpec, MutateInSpec, DurabilityLevel } = couchbase;

async function elapsedMs(fn) {
  const start = Date.now();
  await fn();
  return Date.now() - start;
}

async function create(bucket) {
  const manager = bucket.collections();
  await check('createScope and createCollection through the collection manager', async () => {
    await manager.createScope('app');
    await manager.createCollection('orders', 'app');
    await manager.createCollection('short', 'app', { maxExpiry: 60 });
    const scopes = await manager.getAllScopes();
    const app = scopes.find((s) => s.name === 'app');
    assert.ok(app, JSON.stringify(scopes));
    assert.deepStrictEqual(app.collections.map((c) => c.name).sort(), ['orders', 'short']);
    assert.strictEqual(app.collections.find((c) => c.name === 'short').maxExpiry, 60);
    assert.ok(scopes.find((s) => s.name === '_default'));
  });
  const orders = bucket.scope('app').collection('orders');
  const plain = bucket.defaultCollection();
  await check('CRUD in a named collection, apart from the same key in _default', async () => {
    await plain.upsert('order-1', { where: 'default' });
    await orders.insert('order-1', { item: 'tea', qty: 2 });
    assert.deepStrictEqual((await orders.get('order-1')).content, { item: 'tea', qty: 2 });
    assert.deepStrictEqual((await plain.get('order-1')).content, { where: 'default' });
    await orders.replace('order-1', { item: 'tea', qty: 3 });
    await orders.upsert('order-2', { item: 'cake', qty: 1 });
    await orders.remove('order-2');
    await expectError(orders.get('order-2'), couchbase.DocumentNotFoundError);
  });
  await check('lookupIn and durable mutateIn in a named collection', async () => {
    await orders.mutateIn('order-1', [MutateInSpec.increment('qty', 1)],
                          { durabilityLevel: DurabilityLevel.Majority });
    const r = await orders.lookupIn('order-1', [LookupInSpec.get('qty'), LookupInSpec.get('item')]);
    assert.strictEqual(r.content[0].value, 4);
    assert.strictEqual(r.content[1].value, 'tea');
  });
  await check("a collection's maxExpiry bounds its documents' expiry", async () => {
    const short = bucket.scope('app').collection('short');
    const before = Math.floor(Date.now() / 1000);
    await short.upsert('s', { v: 1 });
    const r = await short.get('s', { withExpiry: true });
    assert.ok(r.expiryTime >= before + 55 && r.expiryTime <= before + 65, `${r.expiryTime}`);
  });
  await check('an unknown scope fails in under a second (ScopeNotFound)', async () => {
    const ms = await elapsedMs(() =>
      expectError(bucket.scope('nope').collection('c').get('k'), couchbase.ScopeNotFoundError));
    assert.ok(ms < 1000, `${ms} ms`);
  });
}

async function restarted(bucket) {
  const manager = bucket.collections();
  const orders = bucket.scope('app').collection('orders');
  await check('scopes, collections and their documents survive a restart', async () => {
    const app = (await manager.getAllScopes()).find((s) => s.name === 'app');
    assert.ok(app && app.collections.some((c) => c.name === 'orders'));
    assert.deepStrictEqual((await orders.get('order-1')).content, { item: 'tea', qty: 4 });
  });
  await check('a dropped collection fails in under a second (CollectionNotFound)', async () => {
    await manager.dropCollection('orders', 'app');
    const ms = await elapsedMs(() => expectError(orders.get('order-1'),
                                                 couchbase.CollectionNotFoundError));
    assert.ok(ms < 1000, `${ms} ms`);
  });
  await check('a collection made again under the name is empty', async () => {
    await manager.createCollection('orders', 'app');
    const again = bucket.scope('app').collection('orders');
    await expectError(again.get('order-1'), couchbase.DocumentNotFoundError);
    await again.upsert('order-1', { item: 'new' });
    assert.deepStrictEqual((await again.get('order-1')).content, { item: 'new' });
  });
  await check('dropScope drops its collections and their documents', async () => {
    await manager.dropScope('app');
    await manager.createScope('app');
    await manager.createCollection('orders', 'app');
    const fresh = bucket.scope('app').collection('orders');
    await expectError(fresh.get('order-1'), couchbase.DocumentNotFoundError);
  });
}

withCluster(port, TIMEOUTS, async (cluster) => {
  const bucket = cluster.bucket('default');
  await (phase === 'create' ? create(bucket) : restarted(bucket));
});
