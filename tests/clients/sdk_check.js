// sdk_check.js: what the Couchbase SDK test scripts share: named checks
// that count passes and failures, an expected error by class, whether a
// document reads as absent, the closing
// "N passed, M failed" line (the exit status follows it), and a run of
// checks on a cluster connection (withCluster).
'use strict';

const counts = { passed: 0, failed: 0 };

function fail(name, e) {
  counts.failed++;
  console.log(`[FAIL] ${name}: ${e && e.stack ? e.stack : e}`);
}

async function check(name, fn) {
  try {
    await fn();
    counts.passed++;
    console.log(`[pass] ${name}`);
  } catch (e) {
    fail(name, e);
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

// Whether `key` reads as absent (DocumentNotFoundError) from `collection`.
async function isGone(collection, key) {
  const couchbase = require('couchbase');
  try {
    await collection.get(key);
    return false;
  } catch (e) {
    if (e instanceof couchbase.DocumentNotFoundError) return true;
    throw e;
  }
}

function finish() {
  console.log(`${counts.passed} passed, ${counts.failed} failed`);
  process.exit(counts.failed === 0 ? 0 : 1);
}

// Connects to kvexec-server on `port` (user and password from KVEXEC_USER
// and KVEXEC_PASSWORD, else Administrator / password), runs body(cluster),
// closes and prints the closing line. A failure outside a check (e.g. the
// connection) counts as one.
async function withCluster(port, timeouts, body) {
  const couchbase = require('couchbase');
  let cluster;
  try {
    cluster = await couchbase.connect(`couchbase://127.0.0.1:${port}`, {
      username: process.env.KVEXEC_USER || 'Administrator',
      password: process.env.KVEXEC_PASSWORD || 'password',
      timeouts,
    });
    await body(cluster);
  } catch (e) {
    fail('setup', e);
  } finally {
    if (cluster) await cluster.close();
  }
  finish();
}

module.exports = { check, expectError, fail, finish, isGone, withCluster };
