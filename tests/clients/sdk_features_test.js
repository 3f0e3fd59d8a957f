// The official Couchbase Node.js SDK against kvexec-server: what an
// application calls beyond CRUD.
//   node sdk_features_test.js PORT
// Prints one "N passed, M failed" line; exits non-zero on any failure.
'use strict';
const assert = require('assert');
const couchbase = require('couchbase');

const [port] = process.argv.slice(2);
const TIMEOUTS = { connectTimeout: 20000, kvTimeout: 10000, kvDurableTimeout: 20000 };
const MIB = 1024 * 1024;

let passed = 0;
let failed = 0;
async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`[pass] ${name}`);
  } catch (e) {
    failed++;
    console.log(`[FAIL] ${name}: ${e && e.stack ? e.stack : e}`);
  }
}

async function expectError(promise, type) {
  try {
    await promise;
  } catch (e) {
    if (e instanceof type) return;
    throw new Error(`expected ${type.name}, got ${e && e.constructor.name}: ${e}`);
  }
  throw new Error(`expected ${type.name}, got success`);
}

// Polls `condition` until it holds or `ms` pass.
async function waitFor(what, condition, ms) {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function isGone(collection, key) {
  try {
    await collection.get(key);
    return false;
  } catch (e) {
    if (e instanceof couchbase.DocumentNotFoundError) return true;
    throw e;
  }
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

(async () => {
  let cluster;
  try {
    cluster = await couchbase.connect(`couchbase://127.0.0.1:${port}`, {
      username: process.env.KVEXEC_USER || 'Administrator',
      password: process.env.KVEXEC_PASSWORD || 'password',
      timeouts: TIMEOUTS,
    });
    const collection = cluster.bucket('default').defaultCollection();
    await locks(collection);
    await preserveExpiry(collection);
    await valueSize(collection);
  } catch (e) {
    failed++;
    console.log(`[FAIL] setup: ${e && e.stack ? e.stack : e}`);
  } finally {
    if (cluster) await cluster.close();
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
})();
