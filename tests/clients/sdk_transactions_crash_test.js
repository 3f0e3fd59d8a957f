// Distributed transactions across a SIGKILL of kvexec-server (driven by
// sdk_transactions_crash_test.sh).
//   node sdk_transactions_crash_test.js load PORT PROGRESS
//     makes ACCOUNTS accounts of START each, then transfers between them
//     from WORKERS workers until killed, appending a line to PROGRESS for
//     each committed transfer.
//   node sdk_transactions_crash_test.js verify PORT
//     after the restart: one transaction reads every account (a transfer
//     whose commit point, its ATR entry, reached disk counts in full, one
//     that did not counts not at all) and the total is ACCOUNTS * START;
//     then a transaction writes every account, once the verifier's
//     lost-attempts cleanup has ended the attempts the kill left (it reads
//     the clients' records and the ATRs, with $vbucket's clock).
// Writes are PersistToMajority: on one node, acknowledged once on disk.
// The level goes with every run() too: the SDK (4.7) takes a run's
// options over the cluster's transactions config, and a run without one
// is not durable at all (its ATR entries record "d":"n"). The first
// transfer checks what its ATR entry records.
// Prints one "N passed, M failed" line; exits non-zero on any failure.
'use strict';
const assert = require('assert');
const fs = require('fs');
const couchbase = require('couchbase');
const { check, withCluster } = require('./sdk_check');

const [mode, port, progress] = process.argv.slice(2);
const ACCOUNTS = 8;
const START = 100;
const WORKERS = 4;
const TIMEOUTS = { connectTimeout: 20000, kvTimeout: 10000, kvDurableTimeout: 20000 };
const durabilityLevel = couchbase.DurabilityLevel.PersistToMajority;

const RUN_OPTIONS = { durabilityLevel };

const accountKey = (i) => `account-${i}`;

// The durability level that a staged document's attempt recorded in its
// ATR entry ("pm": PersistToMajority).
async function recordedDurability(collection, key) {
  const { LookupInSpec } = couchbase;
  const staged = await collection.lookupIn(key, [LookupInSpec.get('txn', { xattr: true })]);
  const { atr, id } = staged.content[0].value;
  const entry = await collection.lookupIn(atr.id, [
    LookupInSpec.get(`attempts.${id.atmpt}.d`, { xattr: true }),
  ]);
  return entry.content[0].value;
}
let recordedLevel;  // by the first transfer that staged a document

async function connect() {
  return couchbase.connect(`couchbase://127.0.0.1:${port}`, {
    username: 'Administrator',
    password: 'password',
    timeouts: TIMEOUTS,
    // An attempt the kill left blocks its documents until a client's
    // lost-attempts cleanup has rolled it back or finished its commit. It
    // scans every ATR of the collections it knows once a cleanup window
    // (60 s by default; short here) and takes over the share of a client
    // whose heartbeat stopped. The metadata collection, which holds the
    // ATRs, makes it known from the start: the verifier's first write may
    // be the one blocked.
    transactions: {
      durabilityLevel,
      timeout: 3000,
      metadataCollection: { bucket: 'default', scope: '_default', collection: '_default' },
      cleanupConfig: { cleanupWindow: 2000 },
    },
  });
}

async function transfer(cluster, collection) {
  const from = Math.floor(Math.random() * ACCOUNTS);
  const to = (from + 1 + Math.floor(Math.random() * (ACCOUNTS - 1))) % ACCOUNTS;
  const amount = 1 + Math.floor(Math.random() * 10);
  await cluster.transactions().run(async (ctx) => {
    const a = await ctx.get(collection, accountKey(from));
    const b = await ctx.get(collection, accountKey(to));
    if (a.content.balance < amount) return;
    await ctx.replace(a, { balance: a.content.balance - amount });
    if (recordedLevel === undefined) {
      recordedLevel = await recordedDurability(collection, accountKey(from));
    }
    await ctx.replace(b, { balance: b.content.balance + amount });
  }, RUN_OPTIONS);
}

async function load() {
  const cluster = await connect();
  const collection = cluster.bucket('default').defaultCollection();
  for (let i = 0; i < ACCOUNTS; i++) {
    await collection.upsert(accountKey(i), { balance: START }, { durabilityLevel });
  }
  const worker = async () => {
    for (;;) {
      try {
        await transfer(cluster, collection);
        fs.appendFileSync(progress, 'committed\n');
      } catch (e) {
        // A lost race (retried), or the server going away under the load.
        if (!(e instanceof couchbase.TransactionFailedError)) throw e;
      }
      if (recordedLevel !== undefined && recordedLevel !== 'pm') {
        throw new Error(`the transfers are not PersistToMajority: ATR entry "d":"${recordedLevel}"`);
      }
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, worker));
}

async function verify() {
  await withCluster(port, TIMEOUTS, async () => {
    const cluster = await connect();
    const collection = cluster.bucket('default').defaultCollection();
    try {
      await check('every transfer is whole or absent: the total is unchanged', async () => {
        let balances;
        await cluster.transactions().run(async (ctx) => {
          balances = [];
          for (let i = 0; i < ACCOUNTS; i++) {
            balances.push((await ctx.get(collection, accountKey(i))).content.balance);
          }
        }, RUN_OPTIONS);
        assert.strictEqual(balances.reduce((sum, b) => sum + b, 0), ACCOUNTS * START,
                           `balances ${JSON.stringify(balances)}`);
        assert.ok(balances.every((b) => b >= 0), `balances ${JSON.stringify(balances)}`);
      });
      await check('every account can be written again by a transaction', async () => {
        const started = Date.now();
        // The SDK's cleanup reads the ATRs one at a time, 15-25 a second
        // here (paced by the client; a lookup takes 0.4 ms), and covers only
        // its share of the 1,024 until the killed client's record expires:
        // an attempt may wait for up to two passes (78 s seen under I/O load).
        const deadline = started + 180000;
        let tries = 0;
        for (;;) {
          tries++;
          try {
            await cluster.transactions().run(async (ctx) => {
              for (let i = 0; i < ACCOUNTS; i++) {
                const doc = await ctx.get(collection, accountKey(i));
                await ctx.replace(doc, { balance: doc.content.balance, checked: true });
              }
            }, { ...RUN_OPTIONS, timeout: 15000 });
            break;
          } catch (e) {
            if (!(e instanceof couchbase.TransactionFailedError) || Date.now() > deadline) {
              throw new Error(`${e.message}: ${e.cause && e.cause.message}`);
            }
          }
        }
        console.log(`every account written after ${tries} transaction(s), ${Date.now() - started} ms`);
        for (let i = 0; i < ACCOUNTS; i++) {
          assert.strictEqual((await collection.get(accountKey(i))).content.checked, true);
        }
      });
    } finally {
      await cluster.close();
    }
  });
}

(mode === 'load' ? load() : verify()).catch((e) => {
  console.log(`[FAIL] ${mode}: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});
