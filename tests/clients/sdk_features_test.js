// The official Couchbase Node.js SDK against kvexec-server: what an
// application calls beyond CRUD: sub-document lookups and mutations, locks,
// preserved expiry, the value size limit.
//   node sdk_features_test.js PORT
// Prints one "N passed, M failed" line; exits non-zero on any failure.
'use strict';
const assert = require('assert');
const couchbase = require('couchbase');
const { check, expectError, isGone, withCluster } = require('./sdk_check');

const [port] = process.argv.slice(2);
const TIMEOUTS = { connectTimeout: 20000, kvTimeout: 10000, kvDurableTimeout: 20000 };
const MIB = 1024 * 1024;

// Polls `condition` until it holds or `ms` pass.
async function waitFor(what, condition, ms) {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const { LookupInSpec, MutateInSpec, StoreSemantics } = couchbase;

async function lookups(collection) {
  const doc = { name: 'kvexec', tags: ['a', 'b', 'c'], nested: { deep: { n: 7 } }, empty: [] };
  await collection.upsert('sd-doc', doc, { expiry: 3600 });
  await check('lookupIn: get, exists, count, whole document', async () => {
    const r = await collection.lookupIn('sd-doc', [
      LookupInSpec.get('name'),
      LookupInSpec.get('nested.deep.n'),
      LookupInSpec.get('tags[-1]'),
      LookupInSpec.exists('nested.deep'),
      LookupInSpec.exists('missing'),
      LookupInSpec.count('tags'),
      LookupInSpec.get(''),
    ]);
    assert.strictEqual(r.content[0].value, 'kvexec');
    assert.strictEqual(r.content[1].value, 7);
    assert.strictEqual(r.content[2].value, 'c');
    assert.strictEqual(r.content[3].value, true);
    assert.strictEqual(r.content[4].value, false);
    assert.strictEqual(r.content[5].value, 3);
    assert.deepStrictEqual(r.content[6].value, doc);
    assert.ok(r.cas, 'lookupIn returns the CAS');
  });
  await check('lookupIn: a missing path is PathNotFound for that spec only', async () => {
    const r = await collection.lookupIn('sd-doc', [
      LookupInSpec.get('nope'),
      LookupInSpec.get('name'),
      LookupInSpec.get('name.inner'),
    ]);
    assert.ok(r.content[0].error instanceof couchbase.PathNotFoundError, `${r.content[0].error}`);
    assert.strictEqual(r.content[1].value, 'kvexec');
    assert.ok(r.content[2].error instanceof couchbase.PathMismatchError, `${r.content[2].error}`);
  });
  await check('lookupIn of a missing document is DocumentNotFound', () =>
    expectError(collection.lookupIn('sd-none', [LookupInSpec.get('a')]),
                couchbase.DocumentNotFoundError));
  await check('get with withExpiry reads $document.exptime', async () => {
    const before = Math.floor(Date.now() / 1000);
    const r = await collection.get('sd-doc', { withExpiry: true });
    assert.deepStrictEqual(r.content, doc);
    assert.ok(r.expiryTime >= before + 3590 && r.expiryTime <= before + 3610,
              `expiryTime ${r.expiryTime}, now ${before}`);
  });
  await check('get with project returns only those paths', async () => {
    const r = await collection.get('sd-doc', { project: ['name', 'nested.deep.n'] });
    assert.deepStrictEqual(r.content, { name: 'kvexec', nested: { deep: { n: 7 } } });
  });
  await check('lookupIn of an xattr and of $document', async () => {
    await collection.mutateIn('sd-doc', [MutateInSpec.upsert('app.seen', 2, { xattr: true, createPath: true })],
                              { preserveExpiry: true });
    const r = await collection.lookupIn('sd-doc', [
      LookupInSpec.get('app', { xattr: true }),
      LookupInSpec.get('$document', { xattr: true }),
      LookupInSpec.get('name'),
    ]);
    assert.deepStrictEqual(r.content[0].value, { seen: 2 });
    assert.ok(r.content[1].value.exptime > 0, JSON.stringify(r.content[1].value));
    assert.strictEqual(r.content[2].value, 'kvexec');
    // A plain get sees the body only, and a plain upsert keeps the xattr.
    assert.deepStrictEqual((await collection.get('sd-doc')).content, doc);
    await collection.upsert('sd-doc', doc);
    const again = await collection.lookupIn('sd-doc', [LookupInSpec.get('app', { xattr: true })]);
    assert.deepStrictEqual(again.content[0].value, { seen: 2 });
  });
}

async function mutations(collection) {
  await collection.upsert('sd-mut', { a: 1, list: [1, 2], set: ['x'], n: 10 });
  await check('mutateIn: every spec, in one request', async () => {
    const r = await collection.mutateIn('sd-mut', [
      MutateInSpec.insert('b', 2),
      MutateInSpec.upsert('c.d', 'deep', { createPath: true }),
      MutateInSpec.replace('a', 100),
      MutateInSpec.remove('set[0]'),
      MutateInSpec.arrayAppend('list', 3),
      MutateInSpec.arrayPrepend('list', 0),
      MutateInSpec.arrayInsert('list[1]', 0.5),
      MutateInSpec.arrayAddUnique('set', 'y'),
      MutateInSpec.increment('n', 5),
      MutateInSpec.decrement('m', 2, { createPath: true }),
    ]);
    assert.strictEqual(r.content[8].value, 15);
    assert.strictEqual(r.content[9].value, -2);
    const got = (await collection.get('sd-mut')).content;
    assert.deepStrictEqual(got, { a: 100, list: [0, 0.5, 1, 2, 3], set: ['y'], n: 15,
                                  b: 2, c: { d: 'deep' }, m: -2 });
  });
  await check('mutateIn is all or nothing: a failing spec changes nothing', async () => {
    const before = (await collection.get('sd-mut')).content;
    await expectError(collection.mutateIn('sd-mut', [
      MutateInSpec.upsert('a', 'changed'),
      MutateInSpec.insert('b', 'exists already'),
    ]), couchbase.PathExistsError);
    await expectError(collection.mutateIn('sd-mut', [MutateInSpec.replace('nope.x', 1)]),
                      couchbase.PathNotFoundError);
    await expectError(collection.mutateIn('sd-mut', [MutateInSpec.arrayAddUnique('set', 'y')]),
                      couchbase.PathExistsError);
    assert.deepStrictEqual((await collection.get('sd-mut')).content, before);
  });
  await check('mutateIn store semantics: insert, upsert, replace', async () => {
    await collection.mutateIn('sd-new', [MutateInSpec.upsert('x', 1)],
                              { storeSemantics: StoreSemantics.Insert });
    await expectError(collection.mutateIn('sd-new', [MutateInSpec.upsert('x', 2)],
                                          { storeSemantics: StoreSemantics.Insert }),
                      couchbase.DocumentExistsError);
    await collection.mutateIn('sd-new', [MutateInSpec.upsert('y', 2)],
                              { storeSemantics: StoreSemantics.Upsert });
    await expectError(collection.mutateIn('sd-none', [MutateInSpec.upsert('x', 1)]),
                      couchbase.DocumentNotFoundError);
    assert.deepStrictEqual((await collection.get('sd-new')).content, { x: 1, y: 2 });
  });
  await check('mutateIn with a CAS: the right one succeeds, a stale one is CasMismatch', async () => {
    const current = await collection.get('sd-new');
    await collection.mutateIn('sd-new', [MutateInSpec.upsert('z', 3)], { cas: current.cas });
    await expectError(collection.mutateIn('sd-new', [MutateInSpec.upsert('z', 4)],
                                          { cas: current.cas }),
                      couchbase.CasMismatchError);
  });
  await check('mutateIn with durability at every level', async () => {
    for (const level of [couchbase.DurabilityLevel.Majority,
                         couchbase.DurabilityLevel.MajorityAndPersistOnMaster,
                         couchbase.DurabilityLevel.PersistToMajority]) {
      const r = await collection.mutateIn('sd-new', [MutateInSpec.increment('count', 1,
                                                      { createPath: true })],
                                          { durabilityLevel: level });
      assert.ok(r.token, 'a durable mutateIn returns a mutation token');
    }
    assert.strictEqual((await collection.get('sd-new')).content.count, 3);
  });
  await check('mutateIn keeps the expiry with preserveExpiry, sets it with expiry', async () => {
    await collection.mutateIn('sd-new', [MutateInSpec.upsert('t', 1)], { expiry: 3600 });
    await collection.mutateIn('sd-new', [MutateInSpec.upsert('t', 2)], { preserveExpiry: true });
    const r = await collection.get('sd-new', { withExpiry: true });
    assert.ok(r.expiryTime > Date.now() / 1000 + 3500, `expiryTime ${r.expiryTime}`);
  });
  await check('mutateIn with the CAS macro writes the write\'s own CAS (Couchbase\'s byte order)',
              async () => {
    const r = await collection.mutateIn('sd-new', [
      MutateInSpec.upsert('txn.cas', couchbase.MutateInMacro.Cas, { xattr: true, createPath: true }),
    ]);
    const got = await collection.lookupIn('sd-new', [LookupInSpec.get('txn.cas', { xattr: true })]);
    const hex = got.content[0].value;
    assert.match(hex, /^0x[0-9a-f]{16}$/);
    // The hex spells the CAS's little-endian bytes.
    const bytes = Buffer.from(hex.slice(2), 'hex');
    assert.strictEqual(bytes.readBigUInt64LE(0).toString(), r.cas.toString());
  });
  await check('mutateIn on a document that is not JSON is DocumentNotJson', async () => {
    await collection.upsert('sd-text', Buffer.from('plain text'));
    await expectError(collection.mutateIn('sd-text', [MutateInSpec.upsert('a', 1)]),
                      couchbase.DocumentNotJsonError);
  });
}

// A write to a locked document gets LOCKED, which Couchbase's error map
// marks retry-now: the SDK retries it (reason key_value_locked) until the
// lock goes or the operation's timeout passes, as against Couchbase Server.
async function expectLockedRetries(promise) {
  try {
    await promise;
  } catch (e) {
    const reasons = (e.context && e.context.retry_reasons) || [];
    if (e instanceof couchbase.TimeoutError && reasons.includes('key_value_locked')) return;
    throw new Error(`expected a timeout retrying key_value_locked, got ${e && e.constructor.name}: ` +
                    `${e} ${JSON.stringify(e && e.context)}`);
  }
  throw new Error('expected a timeout retrying key_value_locked, got success');
}

const SHORT = { timeout: 700 };

async function locks(collection) {
  await check('getAndLock blocks other writers and lockers until unlock', async () => {
    await collection.upsert('locked-doc', { v: 1 });
    const locked = await collection.getAndLock('locked-doc', 10);
    assert.deepStrictEqual(locked.content, { v: 1 });
    await expectLockedRetries(collection.upsert('locked-doc', { v: 2 }, SHORT));
    await expectLockedRetries(collection.remove('locked-doc', SHORT));
    await expectLockedRetries(collection.getAndLock('locked-doc', 10, SHORT));
    const read = await collection.get('locked-doc');  // reads go on, without the real CAS
    assert.deepStrictEqual(read.content, { v: 1 });
    assert.notStrictEqual(read.cas.toString(), locked.cas.toString());
    await collection.unlock('locked-doc', locked.cas);
    await collection.upsert('locked-doc', { v: 3 });
    assert.deepStrictEqual((await collection.get('locked-doc')).content, { v: 3 });
  });
  await check('a replace with the lock\'s CAS succeeds and releases the lock', async () => {
    const locked = await collection.getAndLock('locked-doc', 10);
    await collection.replace('locked-doc', { v: 4 }, { cas: locked.cas });
    await collection.upsert('locked-doc', { v: 5 });
    assert.deepStrictEqual((await collection.get('locked-doc')).content, { v: 5 });
  });
  await check('unlock with a wrong CAS is CasMismatch; of an unlocked document, NotLocked',
              async () => {
    const locked = await collection.getAndLock('locked-doc', 10);
    try {
      // The SDK reports LOCKED on unlock as a CAS mismatch.
      await expectError(collection.unlock('locked-doc', BigInt(locked.cas.toString()) + 1n),
                        couchbase.CasMismatchError);
    } finally {
      await collection.unlock('locked-doc', locked.cas);
    }
    await expectError(collection.unlock('locked-doc', locked.cas),
                      couchbase.DocumentNotLockedError);
  });
  await check('a lock lapses after its time: a write waiting on it then succeeds', async () => {
    await collection.getAndLock('locked-doc', 1);
    await collection.upsert('locked-doc', { v: 6 }, { timeout: 5000 });  // retried until it lapses
    assert.deepStrictEqual((await collection.get('locked-doc')).content, { v: 6 });
  });
}

async function preserveExpiry(collection) {
  await check('upsert and replace with preserveExpiry keep the document\'s expiry', async () => {
    await collection.upsert('ttl-doc', { v: 1 }, { expiry: 2 });
    await collection.upsert('ttl-doc', { v: 2 }, { preserveExpiry: true });
    await collection.replace('ttl-doc', { v: 3 }, { preserveExpiry: true });
    assert.deepStrictEqual((await collection.get('ttl-doc')).content, { v: 3 });
    // It still expires, some 2 s after the first upsert.
    await waitFor('the document to expire', () => isGone(collection, 'ttl-doc'), 6000);
  });
}

async function valueSize(collection) {
  await check('a value of exactly 20 MiB round-trips', async () => {
    const value = Buffer.alloc(20 * MIB, 0x61);
    await collection.upsert('big-doc', value);
    const got = await collection.get('big-doc');
    assert.ok(Buffer.isBuffer(got.content), 'a binary value comes back as a Buffer');
    assert.strictEqual(got.content.length, value.length);
    assert.ok(got.content.equals(value), 'the value came back changed');
  });
  await check('20 MiB + 1 is refused with ValueTooLarge every time', async () => {
    const value = Buffer.alloc(20 * MIB + 1, 0x62);
    for (let i = 0; i < 3; i++) {
      await expectError(collection.upsert(`too-big-${i}`, value), couchbase.ValueTooLargeError);
    }
    await collection.upsert('after-too-big', { ok: true });  // the connection goes on
  });
}

async function unknownBucket(cluster) {
  await check('an unknown bucket is refused: the SDK reports BucketNotFound', async () => {
    // The SDK opens the bucket in the background; operations made before the
    // refusal arrives wait for it, those after fail at once.
    const collection = cluster.bucket('no-such-bucket').defaultCollection();
    await waitFor('BucketNotFound', async () => {
      try {
        await collection.get('x', { timeout: 500 });
      } catch (e) {
        if (e instanceof couchbase.BucketNotFoundError) return true;
        if (e instanceof couchbase.TimeoutError) return false;
        throw e;
      }
      throw new Error('a get on an unknown bucket succeeded');
    }, 5000);
  });
}

withCluster(port, TIMEOUTS, async (cluster) => {
  const collection = cluster.bucket('default').defaultCollection();
  await lookups(collection);
  await mutations(collection);
  await locks(collection);
  await preserveExpiry(collection);
  await valueSize(collection);
  await unknownBucket(cluster);
});
