#!/usr/bin/env python3
"""Print score.py results side by side, and optionally check one of them against the bar.

    python3 compare.py DIR/score-ours.json DIR/score-maybedont.json [--check DIR/score-ours.json]

--check FILE exits 1 unless FILE has ROC AUC >= 0.97 and a precision >= 0.99 at some threshold
whose recall is >= 0.9. Standard library only.
"""
import argparse
import json
import sys

MIN_AUC, MIN_PRECISION = 0.97, 0.99


def f(x, d=3):
    return '-' if x is None else '%.*f' % (d, x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('scores', nargs='*')
    ap.add_argument('--check', help='a score file that must pass the bar')
    a = ap.parse_args()
    res = [json.load(open(p)) for p in a.scores]
    if res:
        names = [r['name'] for r in res]
        print('| | ' + ' | '.join(names) + ' |')
        print('|---|' + '---:|' * len(res))
        print('| ROC AUC | ' + ' | '.join(f(r['auc'], 4) for r in res) + ' |')
        print('| errors | ' + ' | '.join(str(r['errors']) for r in res) + ' |')
        for i, t in enumerate(r['threshold'] for r in res[0]['at_thresholds']):
            print('| P / R at %g | ' % t + ' | '.join(
                '%s / %s' % (f(r['at_thresholds'][i]['precision']), f(r['at_thresholds'][i]['recall'])) for r in res) + ' |')
        cells = []
        for r in res:
            b = r.get('best_precision_at_recall_0.9')
            cells.append('-' if b is None else '%s (R %s, t %.4g)' % (f(b['precision'], 4), f(b['recall']), b['threshold']))
        print('| best P at R >= 0.9 | ' + ' | '.join(cells) + ' |')
        print('\nshare predicted duplicate at 0.9 (recall for dup patterns, false alarms for new ones):\n')
        print('| pattern | label | count | ' + ' | '.join(names) + ' |')
        print('|---|---|---:|' + '---:|' * len(res))
        for p, g in res[0]['patterns'].items():
            print('| %s | %s | %d | ' % (p, g['label'], g['count']) + ' | '.join(
                f(r['patterns'].get(p, {}).get('share_at_0.9')) for r in res) + ' |')
    if a.check:
        r = json.load(open(a.check))
        b = r.get('best_precision_at_recall_0.9')
        ok = (r['auc'] is not None and r['auc'] >= MIN_AUC and b is not None and b['precision'] >= MIN_PRECISION)
        print('\ncheck %s: ROC AUC %s (>= %g), best precision at recall >= 0.9 %s (>= %g): %s' % (
            r['name'], f(r['auc'], 4), MIN_AUC, '-' if b is None else f(b['precision'], 4), MIN_PRECISION,
            'PASS' if ok else 'FAIL'))
        if not ok:
            sys.exit(1)


if __name__ == '__main__':
    main()
