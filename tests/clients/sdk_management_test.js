// The official Couchbase Node.js SDK's collection and bucket managers
// against kvexec-server's management endpoint (--mgmt-port): what they
// create, list and drop, and the error class each refusal maps to (the SDK
// picks it from the HTTP status and Couchbase's texts).
//   node sdk_management_test.js PORT
// Prints one "N passed, M failed" line; exits non-zero on any failure.
'use strict';
const assert = require('assert');
const couchbase = require('couchbase');
const { check, expectError, withCluster } = require('./sdk_check');

const [port] = process.argv.slice(2);
const TIMEOUTS = { connectTimeout: 20000, kvTimeout: 10000, managementTimeout: 20000 };

async function scopes(manager) {
  const all = await manager.getAllScopes();
  return Object.fromEntries(
    all.map((s) => [s.name, Object.fromEntries(s.collections.map((c) => [c.name, c.maxExpiry]))]));
}

async function collectionManager(manager) {
  await check('getAllScopes lists _default._default', async () => {
    assert.deepStrictEqual(await scopes(manager), { _default: { _default: 0 } });
  });
  await check('createScope, createCollection with and without maxExpiry', async () => {
    await manager.createScope('inventory');
    await manager.createCollection('airlines', 'inventory', { maxExpiry: 3600 });
    await manager.createCollection('forever', 'inventory', { maxExpiry: -1 });
    await manager.createCollection('plain', 'inventory');
    assert.deepStrictEqual((await scopes(manager)).inventory,
                           { airlines: 3600, forever: 0, plain: 0 });
  });
  await check('duplicates: ScopeExistsError, CollectionExistsError', async () => {
    await expectError(manager.createScope('inventory'), couchbase.ScopeExistsError);
    await expectError(manager.createCollection('airlines', 'inventory'),
                      couchbase.CollectionExistsError);
  });
  await check('bad names: InvalidArgumentError', async () => {
    await expectError(manager.createScope('_system'), couchbase.InvalidArgumentError);
    await expectError(manager.createCollection('no spaces', 'inventory'),
                      couchbase.InvalidArgumentError);
  });
  await check('unknown scope or collection: ScopeNotFoundError, CollectionNotFoundError',
              async () => {
    await expectError(manager.createCollection('c', 'nope'), couchbase.ScopeNotFoundError);
    await expectError(manager.dropCollection('c', 'nope'), couchbase.ScopeNotFoundError);
    await expectError(manager.dropCollection('nope', 'inventory'),
                      couchbase.CollectionNotFoundError);
    await expectError(manager.dropScope('nope'), couchbase.ScopeNotFoundError);
  });
  await check('updateCollection is refused: InvalidArgumentError', async () => {
    await expectError(manager.updateCollection('airlines', 'inventory', { maxExpiry: 10 }),
                      couchbase.InvalidArgumentError);
    await expectError(manager.updateCollection('nope', 'inventory', { maxExpiry: 10 }),
                      couchbase.CollectionNotFoundError);
  });
  await check('_default cannot be dropped', async () => {
    await expectError(manager.dropScope('_default'), couchbase.UnsupportedOperationError);
    await expectError(manager.dropCollection('_default', '_default'),
                      couchbase.UnsupportedOperationError);
  });
  await check('dropCollection, dropScope', async () => {
    await manager.dropCollection('airlines', 'inventory');
    assert.deepStrictEqual((await scopes(manager)).inventory, { forever: 0, plain: 0 });
    await manager.dropScope('inventory');
    assert.deepStrictEqual(await scopes(manager), { _default: { _default: 0 } });
  });
}

async function bucketManager(manager, collection) {
  await check('getAllBuckets and getBucket describe the served bucket', async () => {
    const all = await manager.getAllBuckets();
    assert.strictEqual(all.length, 1);
    const bucket = await manager.getBucket('default');
    for (const settings of [all[0], bucket]) {
      assert.strictEqual(settings.name, 'default');
      assert.strictEqual(settings.flushEnabled, true);
      assert.strictEqual(settings.numReplicas, 0);
      assert.ok(settings.ramQuotaMB > 0, `ramQuotaMB ${settings.ramQuotaMB}`);
    }
  });
  await check('unknown bucket: BucketNotFoundError', async () => {
    await expectError(manager.getBucket('other'), couchbase.BucketNotFoundError);
    await expectError(manager.dropBucket('other'), couchbase.BucketNotFoundError);
  });
  await check('createBucket is refused: BucketExistsError, InvalidArgumentError', async () => {
    await expectError(manager.createBucket({ name: 'default', ramQuotaMB: 100 }),
                      couchbase.BucketExistsError);
    await expectError(manager.createBucket({ name: 'other', ramQuotaMB: 100 }),
                      couchbase.InvalidArgumentError);
  });
  await check('flushBucket deletes the documents', async () => {
    await collection.upsert('flushed', { a: 1 });
    await manager.flushBucket('default');
    await expectError(collection.get('flushed'), couchbase.DocumentNotFoundError);
  });
  await check('dropping the served bucket is refused', async () => {
    await expectError(manager.dropBucket('default'), couchbase.CouchbaseError);
    await collection.upsert('still-here', { a: 1 });
  });
}

withCluster(port, TIMEOUTS, async (cluster) => {
  const bucket = cluster.bucket('default');
  await collectionManager(bucket.collections());
  await bucketManager(cluster.buckets(), bucket.defaultCollection());
});
