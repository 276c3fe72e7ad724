"""Tests of the soak's own harness (tools/soak/soak.py) that need neither Solr nor the binary:

    python3 -m unittest discover -s tools/soak -p 'test_*.py'

Standard library only, as the soak.
"""
import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import soak  # noqa: E402

# serve's options that say how serve runs, not how its runs decide: the at-rest checks need not
# share them. Every other option serve is started with decides which member of a group stays.
SERVE_ONLY = {'--solr', '--listen', '--after-quiet', '--every', '--state-dir', '--retries',
              '--token-file'}


def option_pairs(argv):
    """[(option, value)] of a command line whose options all take one value."""
    first = next(i for i, a in enumerate(argv) if a.startswith('--'))
    return [(argv[i], argv[i + 1]) for i in range(first, len(argv) - 1)
            if argv[i].startswith('--') and not argv[i + 1].startswith('--')]


class FakeProc:
    """serve as Serve.start sees it: it says where it listens, then runs."""

    def __init__(self):
        self.stderr = io.BytesIO(b'serving on 127.0.0.1:9\n')

    def poll(self):
        return None


class Nothing:
    """The Solr, web, crawler of an index at rest with nothing in it."""
    core = 'http://127.0.0.1:9/solr/collection1'
    skipped = {}
    known = {}

    def all_docs(self, _fl):
        return []

    def content(self, _url):
        return None


class RestChecks(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix='soak-test-')
        self.addCleanup(shutil.rmtree, self.work, True)
        soak.WORK = self.work

    def test_check_and_full_dry_run_decide_under_serves_order(self):
        """Issue 41: the 5-minute soak failed `check` and `run --full --dry-run` at rest (two
        description flags, the home pages' shared description) while serve's flags were right: the
        checks ran without serve's --rules, so they ranked the home pages by another order."""
        spawned = []

        def spawn(argv, **_kw):
            spawned.append(argv)
            return FakeProc()

        with mock.patch.object(soak, 'spawn', spawn):
            serve = soak.Serve('/bin/solr-dedup', 'http://127.0.0.1:8/solr/collection1',
                               os.path.join(self.work, 'rules.json'), 3.0)
            serve.start()
        self.addCleanup(serve.log.close)
        serve.base = None  # no API: predictions answer nothing
        deciding = [(o, v) for o, v in option_pairs(spawned[0]) if o not in SERVE_ONLY]
        self.assertIn(('--rules', os.path.join(self.work, 'rules.json')), deciding)

        ran = []

        def run(argv, **_kw):
            ran.append(argv)
            if '--report' in argv:
                with open(argv[argv.index('--report') + 1], 'w') as f:
                    json.dump({'documents': {'written': 0}, 'dimensions': {}}, f)
            return subprocess.CompletedProcess(argv, 0, b'', b'')

        nothing = Nothing()
        with mock.patch.object(soak.subprocess, 'run', run):
            results = soak.invariants(argparse.Namespace(), nothing, nothing, nothing, serve,
                                      '/bin/solr-dedup')
        self.assertTrue(all(ok for _, ok, _ in results), results)
        checks = {tuple(a[1:2] + [x for x in a if x in ('--full', '--dry-run')]): a for a in ran}
        self.assertEqual(sorted(checks), [('check',), ('run', '--full', '--dry-run')])
        for name, argv in checks.items():
            pairs = option_pairs(argv)
            for option in deciding:
                self.assertIn(option, pairs, '%s runs without serve\'s %s %s: %s'
                              % (' '.join(name), option[0], option[1], argv))
            # A state folder that keeps no order: every tied group is decided again.
            state = dict(pairs).get('--state-dir')
            self.assertIsNotNone(state, argv)
            self.assertFalse(os.path.exists(os.path.join(state, 'decided')), argv)


if __name__ == '__main__':
    unittest.main()
