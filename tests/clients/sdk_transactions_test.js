// The official Couchbase Node.js SDK's distributed transactions against
// kvexec-server. They need sub-document access to tombstones: a staged
// insert is a tombstone carrying the transaction's xattrs (AccessDeleted,
// CreateAsDeleted), committed by reviving it (ReviveDocument), and every
// write is a durable mutateIn with ${Mutation.CAS} macros.
//   node sdk_transactions_test.js PORT
// Prints one "N passed, M failed" line; exits non-zero on any failure.
'use strict';
const assert = require('assert');
const couchbase = require('couchbase');
const { check, expectError, isGone, withCluster } = require('./sdk_check');

const [port] = process.argv.slice(2);
const TIMEOUTS = { connectTimeout: 20000, kvTimeout: 10000, kvDurableTimeout: 20000 };

async function commitAndRollback(cluster, collection) {
  await collection.upsert('tx-a', { balance: 100 });
  await collection.upsert('tx-b', { balance: 0 });
  await collection.upsert('tx-gone', { old: true });

  await check('a transaction inserts, replaces and removes, and commits all of it', async () => {
    await cluster.transactions().run(async (ctx) => {
      const a = await ctx.get(collection, 'tx-a');
      const b = await ctx.get(collection, 'tx-b');
      await ctx.replace(a, { balance: a.content.balance - 30 });
      await ctx.replace(b, { balance: b.content.balance + 30 });
      await ctx.insert(collection, 'tx-new', { made: 'in a transaction' });
      await ctx.remove(await ctx.get(collection, 'tx-gone'));
    });
    assert.strictEqual((await collection.get('tx-a')).content.balance, 70);
    assert.strictEqual((await collection.get('tx-b')).content.balance, 30);
    assert.deepStrictEqual((await collection.get('tx-new')).content, { made: 'in a transaction' });
    assert.ok(await isGone(collection, 'tx-gone'), 'the removed document is gone');
  });

  await check('a staged insert is read by its transaction and by no one else', async () => {
    await cluster.transactions().run(async (ctx) => {
      await ctx.insert(collection, 'tx-staged', { n: 1 });
      assert.deepStrictEqual((await ctx.get(collection, 'tx-staged')).content, { n: 1 });
      assert.ok(await isGone(collection, 'tx-staged'), 'invisible outside before the commit');
    });
    assert.deepStrictEqual((await collection.get('tx-staged')).content, { n: 1 });
  });

  await check('a transaction that throws leaves every document as it was', async () => {
    await expectError(
      cluster.transactions().run(async (ctx) => {
        const a = await ctx.get(collection, 'tx-a');
        await ctx.replace(a, { balance: 0 });
        await ctx.insert(collection, 'tx-never', { n: 1 });
        throw new Error('the application changes its mind');
      }),
      couchbase.TransactionFailedError
    );
    assert.strictEqual((await collection.get('tx-a')).content.balance, 70);
    assert.ok(await isGone(collection, 'tx-never'), 'the staged insert was rolled back');
    // The rolled-back insert left a tombstone; a plain insert still works.
    await collection.insert('tx-never', { later: true });
    assert.deepStrictEqual((await collection.get('tx-never')).content, { later: true });
  });

  await check('an insert where a deleted document was is committed', async () => {
    await collection.upsert('tx-again', { v: 1 });
    await collection.remove('tx-again');
    await cluster.transactions().run(async (ctx) => {
      await ctx.insert(collection, 'tx-again', { v: 2 });
    });
    assert.deepStrictEqual((await collection.get('tx-again')).content, { v: 2 });
  });

  await check('inserting a document that exists fails the transaction', async () => {
    await expectError(
      cluster.transactions().run(async (ctx) => {
        await ctx.insert(collection, 'tx-a', { clash: true });
      }),
      couchbase.TransactionFailedError
    );
    assert.strictEqual((await collection.get('tx-a')).content.balance, 70);
  });
}

// Write-write conflicts are found through the transaction xattrs and CAS.
// The Node.js SDK fails a transaction whose staged write lost a race
// (TransactionFailedError, rolled back) instead of retrying it, so each
// worker runs its transaction again until it commits, as an application
// does: every increment lands exactly once, and the losers leave no trace.
// Binary documents: the transaction stages their bytes in a binary xattr
// and sends their flags with the commit (HELLO SubdocBinaryXattr, 0x21).
async function binaryDocuments(cluster, collection) {
  const raw = new couchbase.RawBinaryTranscoder();
  const bytes = Buffer.from([0, 255, 1, 2, 3, 0x7b]);
  // Reads a document's flags as its content.
  const flagsOf = async (key) => {
    const flagsReader = { encode: () => { throw new Error('read only'); }, decode: (_b, f) => f };
    return (await collection.get(key, { transcoder: flagsReader })).content;
  };

  await check('a transaction inserts and replaces a binary document', async () => {
    await cluster.transactions().run(async (ctx) => {
      await ctx.insert(collection, 'tx-bin', bytes, { transcoder: raw });
      const staged = await ctx.get(collection, 'tx-bin', { transcoder: raw });
      assert.deepStrictEqual(staged.content, bytes, 'its own staged bytes');
    });
    assert.deepStrictEqual((await collection.get('tx-bin', { transcoder: raw })).content, bytes);
    await cluster.transactions().run(async (ctx) => {
      const doc = await ctx.get(collection, 'tx-bin', { transcoder: raw });
      assert.deepStrictEqual(doc.content, bytes);
      await ctx.replace(doc, Buffer.from('next bytes'), { transcoder: raw });
    });
    const after = await collection.get('tx-bin', { transcoder: raw });
    assert.deepStrictEqual(after.content, Buffer.from('next bytes'));
    assert.strictEqual(await flagsOf('tx-bin'), 0x03000002, "the SDK's binary flags");
  });

  await check('a JSON document a transaction wrote carries the JSON flags', async () => {
    await cluster.transactions().run(async (ctx) => {
      await ctx.insert(collection, 'tx-json-flags', { n: 1 });
    });
    assert.strictEqual(await flagsOf('tx-json-flags'), 0x02000000, "the SDK's JSON flags");
    assert.deepStrictEqual((await collection.get('tx-json-flags')).content, { n: 1 });
  });
}

async function concurrent(cluster, collection) {
  await check('concurrent transactions on one document each land once', async () => {
    await collection.upsert('tx-counter', { n: 0 });
    const WORKERS = 6;
    let conflicts = 0;
    const increment = async () => {
      for (let attempt = 0; attempt < 100; attempt++) {
        try {
          await cluster.transactions().run(async (ctx) => {
            const doc = await ctx.get(collection, 'tx-counter');
            await ctx.replace(doc, { n: doc.content.n + 1 });
          });
          return;
        } catch (e) {
          if (!(e instanceof couchbase.TransactionFailedError)) throw e;
          conflicts++;
        }
      }
      throw new Error('no commit in 100 attempts');
    };
    await Promise.all(Array.from({ length: WORKERS }, increment));
    const after = await collection.lookupIn('tx-counter', [
      couchbase.LookupInSpec.get('n'),
      couchbase.LookupInSpec.exists('txn', { xattr: true }),
    ]);
    assert.strictEqual(after.content[0].value, WORKERS, `${conflicts} conflicts on the way`);
    assert.strictEqual(after.content[1].value, false, 'no transaction left its xattrs behind');
  });
}

withCluster(port, TIMEOUTS, async (cluster) => {
  const collection = cluster.bucket('default').defaultCollection();
  await commitAndRollback(cluster, collection);
  await binaryDocuments(cluster, collection);
  await concurrent(cluster, collection);
});
