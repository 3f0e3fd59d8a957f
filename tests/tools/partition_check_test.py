#!/usr/bin/python3
"""tools/partition-soak's pure parts, no network: the history checker on
synthetic histories (each bad one breaks one rule and must fail exactly
the checks that rule belongs to), the client's wire encoding and key
hashing, and the seeded schedule.

  partition_check_test.py REPO
"""

import struct
import sys
import unittest
import zlib

sys.path.insert(0, sys.argv.pop(1) + "/tools" if len(sys.argv) > 1 else "tools")

from report_lib import kvclient, partition_check, partition_run  # noqa: E402


class CheckerCatchesEachBadHistory(unittest.TestCase):
    def test_each_case_fails_exactly_its_checks(self):
        for what, records, finals, partitions, min_acked, want in \
                partition_check.self_test_cases():
            with self.subTest(what):
                self.assertEqual(partition_check.failed_checks(records, finals, partitions,
                                                               min_acked), want)

    def test_violation_names_key_cas_and_node(self):
        _, records, _, _, _, _ = partition_check.self_test_cases()[0]
        checks = partition_check.check_history(
            records, {"k": {"id": "w1", "cas": 110, "node": "10.0.0.2:11210"}}, ["k"], 1, 1, 1)
        lost = next(c for c in checks if c.name == "acknowledged-writes-kept")
        self.assertEqual(len(lost.violations), 1)
        text = lost.violations[0]
        for part in ("k:", "w3", "base 110 -> cas 120", "10.0.0.2:11210"):
            self.assertIn(part, text)

    def test_self_test_passes(self):
        self.assertEqual(partition_check.self_test(), [])


class ClientWire(unittest.TestCase):
    def test_vbucket_is_couchbase_crc_hashing(self):
        for key in (b"", b"a", b"pt-key-07", b"\xff" * 250):
            want = ((zlib.crc32(key) >> 16) & 0x7fff) % 16
            self.assertEqual(kvclient.vbucket_of(key, 16), want)

    def test_plain_request_uses_classic_magic(self):
        wire = kvclient.encode_request(0x00, key=b"k", vbucket=5, opaque=9)
        self.assertEqual(wire[0], 0x80)
        self.assertEqual(struct.unpack(">H", wire[2:4])[0], 1)
        self.assertEqual(struct.unpack(">H", wire[6:8])[0], 5)
        self.assertEqual(wire[24:], b"k")

    def test_durable_set_carries_the_frame_info(self):
        wire = kvclient.encode_request(0x01, key=b"key", extras=b"\0" * 8, value=b"v",
                                       cas=42, durability=(kvclient.MAJORITY, 2000))
        self.assertEqual(wire[0], 0x08)           # alternative request magic
        self.assertEqual(wire[2], 4)              # framing extras length
        self.assertEqual(wire[3], 3)              # key length (one byte)
        self.assertEqual(wire[4], 8)              # extras length
        self.assertEqual(struct.unpack(">I", wire[8:12])[0], 4 + 8 + 3 + 1)
        self.assertEqual(struct.unpack(">Q", wire[16:24])[0], 42)
        self.assertEqual(wire[24:28], bytes([0x13, 1]) + struct.pack(">H", 2000))
        self.assertEqual(wire[36:], b"keyv")

    def test_outcomes_of_statuses(self):
        self.assertIn(0x02, kvclient.NO_EFFECT)   # KEY_EEXISTS: the CAS lost, nothing written
        self.assertIn(0x07, kvclient.NO_EFFECT)   # NOT_MY_VBUCKET
        self.assertNotIn(0xa3, kvclient.NO_EFFECT)  # SYNC_WRITE_AMBIGUOUS may have happened
        self.assertNotIn(0x84, kvclient.NO_EFFECT)  # EINTERNAL: unknown, so ambiguous


class Schedule(unittest.TestCase):
    def test_same_seed_same_schedule(self):
        kinds = list(partition_run.KINDS)
        a = partition_run.make_schedule(9, kinds, (3, 14), (2, 5), seconds=300)
        self.assertEqual(a, partition_run.make_schedule(9, kinds, (3, 14), (2, 5), seconds=300))
        self.assertNotEqual(a, partition_run.make_schedule(10, kinds, (3, 14), (2, 5),
                                                           seconds=300))
        # A shorter plan is the start of a longer one.
        self.assertEqual(partition_run.make_schedule(9, kinds, (3, 14), (2, 5), count=3), a[:3])

    def test_at_least_one_partition(self):
        self.assertEqual(len(partition_run.make_schedule(1, ["node"], (3, 4), (1, 2),
                                                         seconds=0)), 1)

    def test_quick_seed_isolates_a_node_then_the_leader(self):
        # CTest's partition_quick (tests/tools/CMakeLists.txt), held past the
        # 5 s lease so that each makes a failover.
        steps = partition_run.make_schedule(1, ["node", "leader"], (7, 10), (2, 4), count=2)
        self.assertEqual([s["kind"] for s in steps], ["node", "leader"])
        self.assertTrue(all(s["hold"] > 7 for s in steps))


if __name__ == "__main__":
    unittest.main()
