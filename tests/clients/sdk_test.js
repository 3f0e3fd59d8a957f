// The official Couchbase Node.js SDK against kvexec-server.
//   node sdk_test.js write  PORT ACKFILE   a wrong password is refused, CRUD
//                                          checks, then durable upserts at all
//                                          three levels; acknowledged keys are
//                                          written to ACKFILE
//   node sdk_test.js verify PORT ACKFILE   reads back every acknowledged
//                                          durable write (after a SIGKILL and
//                                          a restart on the same directory)
// Prints one "N passed, M failed" line; exits non-zero on any failure.
'use strict';
const assert = require('assert');
const fs = require('fs');
const couchbase = require('couchbase');
const { check, expectError, fail, finish } = require('./sdk_check');

const [mode, port, ackFile] = process.argv.slice(2);
const USER = process.env.KVEXEC_USER || 'Administrator';
const PASSWORD = process.env.KVEXEC_PASSWORD || 'password';
const DURABLE_PER_LEVEL = 50;
const TIMEOUTS = { connectTimeout: 20000, kvTimeout: 10000, kvDurableTimeout: 20000 };
const LEVELS = {
  majority: couchbase.DurabilityLevel.Majority,
  majorityAndPersistOnMaster: couchbase.DurabilityLevel.MajorityAndPersistOnMaster,
  persistToMajority: couchbase.DurabilityLevel.PersistToMajority,
};
// On one node, Majority means "in the active's memory": only the persist
// levels promise that the write survives a SIGKILL.
const PERSISTED = new Set(['majorityAndPersistOnMaster', 'persistToMajority']);

// A write's mutation token (HELLO mutation_seqno): the vBucket's uuid and
// the write's sequence number, both non-zero.
function checkToken(result) {
  assert.ok(result.token, 'the write returned no mutation token');
  const t = result.token.toJSON();
  assert.notStrictEqual(BigInt(t.partition_uuid), 0n, `vbucket uuid 0 in ${result.token}`);
  assert.ok(BigInt(t.sequence_number) > 0n, `seqno 0 in ${result.token}`);
  return t;
}

async function connect(password = PASSWORD) {
  const cluster = await couchbase.connect(`couchbase://127.0.0.1:${port}`, {
    username: USER,
    password,
    timeouts: TIMEOUTS,
  });
  const collection = cluster.bucket('default').defaultCollection();
  return { cluster, collection };
}

async function wrongPasswordIsRefused() {
  await check('a wrong password is refused (SCRAM)', async () => {
    let c;
    try {
      c = await connect(`${PASSWORD}-wrong`);
      await c.collection.get('sdk-doc');
    } catch (e) {
      if (e instanceof couchbase.AuthenticationFailureError) return;
      throw new Error(`expected AuthenticationFailureError, got ${e && e.constructor.name}: ${e}`);
    } finally {
      if (c) await c.cluster.close();
    }
    throw new Error('a wrong password was accepted');
  });
}

async function writePhase(collection) {
  await check('upsert + get', async () => {
    const r = await collection.upsert('sdk-doc', { name: 'kvexec', n: 1 });
    assert.ok(r.cas, 'upsert returns a CAS');
    checkToken(r);
    const g = await collection.get('sdk-doc');
    assert.deepStrictEqual(g.content, { name: 'kvexec', n: 1 });
  });
  await check('insert of an existing key is DocumentExists', () =>
    expectError(collection.insert('sdk-doc', { n: 2 }), couchbase.DocumentExistsError));
  await check('replace', async () => {
    await collection.replace('sdk-doc', { n: 3 });
    assert.deepStrictEqual((await collection.get('sdk-doc')).content, { n: 3 });
  });
  await check('exists', async () => {
    assert.strictEqual((await collection.exists('sdk-doc')).exists, true);
    assert.strictEqual((await collection.exists('sdk-no-such-doc')).exists, false);
  });
  await check('remove, then get is DocumentNotFound and exists is false', async () => {
    await collection.remove('sdk-doc');
    await expectError(collection.get('sdk-doc'), couchbase.DocumentNotFoundError);
    assert.strictEqual((await collection.exists('sdk-doc')).exists, false, 'exists after remove');
  });
  const acked = [];
  for (const [name, level] of Object.entries(LEVELS)) {
    await check(`durable upserts (${name})`, async () => {
      for (let i = 0; i < DURABLE_PER_LEVEL; i++) {
        const key = `durable-${name}-${i}`;
        const value = { level: name, i };
        const r = await collection.upsert(key, value, { durabilityLevel: level });
        checkToken(r);
        acked.push({ key, value, persisted: PERSISTED.has(name) });
      }
    });
  }
  fs.writeFileSync(ackFile, JSON.stringify(acked));
}

async function verifyPhase(collection) {
  const acked = JSON.parse(fs.readFileSync(ackFile, 'utf8'));
  let survivedMajority = 0;
  let majority = 0;
  // A persisted level must be back with its value; a Majority write may be
  // missing (never on disk) but never back with another value.
  await check(`every acknowledged persisted durable write is back after SIGKILL`, async () => {
    const wrong = [];
    for (const { key, value, persisted } of acked) {
      if (!persisted) majority++;
      let content;
      try {
        content = (await collection.get(key)).content;
      } catch (e) {
        if (!persisted && e instanceof couchbase.DocumentNotFoundError) continue;
        wrong.push(`${key}: ${e && e.constructor.name}: ${e}`);
        continue;
      }
      try {
        assert.deepStrictEqual(content, value);
        if (!persisted) survivedMajority++;
      } catch (e) {
        wrong.push(`${key}: read ${JSON.stringify(content)}, acknowledged ${JSON.stringify(value)}`);
      }
    }
    assert.strictEqual(acked.length, DURABLE_PER_LEVEL * Object.keys(LEVELS).length,
                       'the write phase did not acknowledge every durable write');
    assert.deepStrictEqual(wrong, []);
  });
  console.log(`majority-level writes back after SIGKILL: ${survivedMajority}/${majority}`);
}

(async () => {
  let cluster;
  try {
    const c = await connect();
    cluster = c.cluster;
    if (mode === 'write') {
      await wrongPasswordIsRefused();
      await writePhase(c.collection);
    }
    else if (mode === 'verify') await verifyPhase(c.collection);
    else throw new Error(`unknown mode ${mode}`);
  } catch (e) {
    fail(mode, e);
  } finally {
    if (cluster) await cluster.close();
  }
  finish();
})();
