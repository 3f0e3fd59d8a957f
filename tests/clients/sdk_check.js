// sdk_check.js: the checks the Couchbase SDK test scripts share: named
// checks that count passes and failures, an expected error by class, and
// the closing "N passed, M failed" line (the exit status follows it).
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

function finish() {
  console.log(`${counts.passed} passed, ${counts.failed} failed`);
  process.exit(counts.failed === 0 ? 0 : 1);
}

module.exports = { check, expectError, fail, finish };
