// The Couchbase Node.js SDK over TLS (couchbases://): bootstraps from
// kvexec-server's TLS port, trusting the test's certificate, and works
// from the cluster map's "kvSSL" port: CRUD, a durable write, a lock; its
// collection manager goes to the map's "mgmtSSL" port (HTTPS). A client
// that trusts another certificate gets nowhere.
// Usage: node sdk_tls_test.js TLS_PORT TRUSTED_PEM OTHER_PEM
'use strict';

const couchbase = require('couchbase');
const { check, expectError, fail, finish } = require('./sdk_check');

const [port, trusted, other] = process.argv.slice(2);

function connect(trustStorePath) {
  return couchbase.connect(`couchbases://127.0.0.1:${port}`, {
    username: 'Administrator',
    password: 'password',
    security: { trustStorePath },
    timeouts: { connectTimeout: 5000, kvTimeout: 5000 },
  });
}

async function main() {
  const cluster = await connect(trusted);
  try {
    const collection = cluster.bucket('default').defaultCollection();
    await check('upsert and get over TLS', async () => {
      await collection.upsert('tls:doc', { over: 'tls' });
      const got = await collection.get('tls:doc');
      if (got.content.over !== 'tls') throw new Error(`got ${JSON.stringify(got.content)}`);
    });
    await check('a Majority durable write over TLS', async () => {
      await collection.upsert('tls:durable', { n: 1 }, {
        durabilityLevel: couchbase.DurabilityLevel.Majority,
      });
      const got = await collection.get('tls:durable');
      if (got.content.n !== 1) throw new Error(`got ${JSON.stringify(got.content)}`);
    });
    await check('getAndLock, then a write without the CAS is refused', async () => {
      const locked = await collection.getAndLock('tls:doc', 10);
      await expectError(collection.upsert('tls:doc', { x: 1 }, { timeout: 1000 }),
                        couchbase.CouchbaseError);
      await collection.unlock('tls:doc', locked.cas);
    });
    await check('the collection manager over HTTPS (mgmtSSL)', async () => {
      const manager = cluster.bucket('default').collections();
      await manager.createScope('over_tls');
      await manager.createCollection({ name: 'c1', scopeName: 'over_tls' });
      const scopes = await manager.getAllScopes();
      const made = scopes.find((s) => s.name === 'over_tls');
      if (!made || !made.collections.some((c) => c.name === 'c1')) {
        throw new Error(`scopes: ${JSON.stringify(scopes.map((s) => s.name))}`);
      }
    });
    await check('a 1 MiB document round-trips (many TLS records)', async () => {
      const big = 'x'.repeat(1 << 20);
      await collection.upsert('tls:big', { big });
      const got = await collection.get('tls:big');
      if (got.content.big !== big) throw new Error('the value came back changed');
    });
  } finally {
    await cluster.close();
  }
  await check('a client that trusts another certificate is refused', async () => {
    let untrusting;
    try {
      untrusting = await connect(other);
      await untrusting.bucket('default').defaultCollection().get('tls:doc', { timeout: 3000 });
    } catch (e) {
      return;  // refused at connect or at the first operation
    } finally {
      if (untrusting) await untrusting.close();
    }
    throw new Error('it read a document');
  });
}

main().catch((e) => fail('setup', e)).finally(finish);
