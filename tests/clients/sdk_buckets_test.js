// The official Couchbase Node.js SDK against a kvexec-server serving two
// buckets (--bucket default --bucket travel-sample): one cluster
// connection opens both; the same key is a different document in each, a
// bucket's scopes, durable writes and flush are its own, the bucket
// manager lists both. Three phases, with a restart of the server between:
//   node sdk_buckets_test.js PORT create     (write to both buckets)
//   node sdk_buckets_test.js PORT restarted  (both still hold their own)
//   KVEXEC_USER=app ... PORT confined         (app, given travel-sample only
//                                              by --users, uses only that)
// Prints one "N passed, M failed" line; exits non-zero on any failure.
'use strict';
const assert = require('assert');
const couchbase = require('couchbase');
const { check, expectError, withCluster } = require('./sdk_check');

const [port, phase] = process.argv.slice(2);
const TIMEOUTS = { connectTimeout: 20000, kvTimeout: 10000, managementTimeout: 20000 };
const { DurabilityLevel, LookupInSpec } = couchbase;

async function create(cluster, plain, travel) {
  await check('the same key is a different document in each bucket', async () => {
    await plain.defaultCollection().upsert('city', { name: 'in default' });
    await travel.defaultCollection().upsert('city', { name: 'in travel-sample' });
    await travel.defaultCollection().upsert('airline_10', { callsign: 'MILE-AIR' });
    assert.deepStrictEqual((await plain.defaultCollection().get('city')).content,
                           { name: 'in default' });
    assert.deepStrictEqual((await travel.defaultCollection().get('city')).content,
                           { name: 'in travel-sample' });
    await expectError(plain.defaultCollection().get('airline_10'),
                      couchbase.DocumentNotFoundError);
  });
  await check('a durable write and a lookupIn in the second bucket', async () => {
    await travel.defaultCollection().upsert('route_5', { stops: 0 },
                                            { durabilityLevel: DurabilityLevel.Majority });
    const r = await travel.defaultCollection().lookupIn('route_5', [LookupInSpec.get('stops')]);
    assert.strictEqual(r.content[0].value, 0);
  });
  await check("the bucket manager lists both; each bucket's scopes are its own", async () => {
    const names = (await cluster.buckets().getAllBuckets()).map((b) => b.name);
    assert.deepStrictEqual(names, ['default', 'travel-sample']);
    await travel.collections().createScope('inventory');
    await travel.collections().createCollection('airline', 'inventory');
    const inTravel = (await travel.collections().getAllScopes()).map((s) => s.name);
    const inDefault = (await plain.collections().getAllScopes()).map((s) => s.name);
    assert.ok(inTravel.includes('inventory'), JSON.stringify(inTravel));
    assert.ok(!inDefault.includes('inventory'), JSON.stringify(inDefault));
    await travel.scope('inventory').collection('airline').upsert('airline_10', { id: 10 });
  });
  await check('flushing one bucket leaves the other', async () => {
    await plain.defaultCollection().upsert('to-flush', { a: 1 });
    await travel.defaultCollection().upsert('to-flush', { a: 2 });
    await cluster.buckets().flushBucket('default');
    await expectError(plain.defaultCollection().get('to-flush'), couchbase.DocumentNotFoundError);
    await expectError(plain.defaultCollection().get('city'), couchbase.DocumentNotFoundError);
    assert.deepStrictEqual((await travel.defaultCollection().get('to-flush')).content, { a: 2 });
    await plain.defaultCollection().upsert('city', { name: 'in default again' });
  });
}

async function restarted(plain, travel) {
  await check('each bucket holds its own documents after a restart', async () => {
    assert.deepStrictEqual((await plain.defaultCollection().get('city')).content,
                           { name: 'in default again' });
    assert.deepStrictEqual((await travel.defaultCollection().get('city')).content,
                           { name: 'in travel-sample' });
    assert.deepStrictEqual((await travel.defaultCollection().get('route_5')).content,
                           { stops: 0 });
    assert.deepStrictEqual(
      (await travel.scope('inventory').collection('airline').get('airline_10')).content, { id: 10 });
  });
}

async function confined(cluster, plain, travel) {
  await check('a user given one bucket reads and writes it', async () => {
    assert.deepStrictEqual((await travel.defaultCollection().get('city')).content,
                           { name: 'in travel-sample' });
    await travel.defaultCollection().upsert('by-app', { app: true },
                                            { durabilityLevel: DurabilityLevel.Majority });
    assert.deepStrictEqual((await travel.defaultCollection().get('by-app')).content,
                           { app: true });
  });
  await check('the bucket manager lists only its bucket', async () => {
    const names = (await cluster.buckets().getAllBuckets()).map((b) => b.name);
    assert.deepStrictEqual(names, ['travel-sample']);
  });
  await check('the other bucket is refused to it, not served', async () => {
    // SELECT_BUCKET answers EACCESS, which the SDK reports as for a bucket
    // that does not exist.
    await expectError(plain.defaultCollection().get('city', { timeout: 3000 }),
                      couchbase.BucketNotFoundError);
    await expectError(cluster.buckets().flushBucket('default'), couchbase.CouchbaseError);
  });
}

const PHASES = { create, restarted: (cluster, plain, travel) => restarted(plain, travel),
                 confined };
withCluster(port, TIMEOUTS, async (cluster) => {
  const plain = cluster.bucket('default');
  const travel = cluster.bucket('travel-sample');
  await PHASES[phase](cluster, plain, travel);
});
