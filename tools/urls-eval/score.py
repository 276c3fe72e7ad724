#!/usr/bin/env python3
"""Score duplicate-URL predictions against the simulated ground truth.

    python3 score.py DIR PREDICTIONS.jsonl [--name NAME] [--docs DOCS.jsonl]

DIR/queries.jsonl holds the labelled queries; PREDICTIONS.jsonl one line per query, in the same
order, with at least {"url": ..., "probability": p}. A line with "error" (or without a probability)
counts as probability 0 and is reported. Prints markdown tables and writes DIR/score-NAME.json:
precision and recall per threshold (and the recall ceiling: every duplicate the predictor names a
page for, at any probability), ROC AUC, the Brier score and a reliability table (the mean
probability and the share of duplicates in bands of probability). With --docs (the decided
documents the predictions were made from), the share of answers whose duplicate_of is the page the
index shows (exact_signature_unique_b true).

Standard library only.
"""
import argparse
import json
import os
import sys

THRESHOLDS = [0.5, 0.8, 0.9, 0.95, 0.98, 0.99]
SHARE_AT = 0.9
MIN_RECALL = 0.9


def auc(labels, scores):
    """ROC AUC as the Mann-Whitney U statistic over ranks, ties given their average rank.
    None when one class is empty."""
    n_pos = sum(1 for l in labels if l)
    n_neg = len(labels) - n_pos
    if n_pos == 0 or n_neg == 0:
        return None
    order = sorted(range(len(scores)), key=lambda i: scores[i])
    rank_sum_pos = 0.0
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        avg_rank = (i + j) / 2 + 1  # ranks i+1 .. j+1
        for k in range(i, j + 1):
            if labels[order[k]]:
                rank_sum_pos += avg_rank
        i = j + 1
    u = rank_sum_pos - n_pos * (n_pos + 1) / 2
    return u / (n_pos * n_neg)


def auc_pairs(labels, scores):
    """The same by counting all pairs (for the self-check only)."""
    pos = [s for l, s in zip(labels, scores) if l]
    neg = [s for l, s in zip(labels, scores) if not l]
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def self_check():
    # Hand example: positives 0.9, 0.4; negatives 0.4, 0.1. Pairs: (0.9>0.4) 1, (0.9>0.1) 1,
    # (0.4=0.4) 0.5, (0.4>0.1) 1: AUC = 3.5 / 4 = 0.875.
    labels, scores = [True, True, False, False], [0.9, 0.4, 0.4, 0.1]
    assert abs(auc(labels, scores) - 0.875) < 1e-12, auc(labels, scores)
    assert auc([True, False], [0.5, 0.5]) == 0.5
    assert auc([True, False], [0.2, 0.7]) == 0.0
    assert auc([True, True], [0.2, 0.7]) is None
    import random
    r = random.Random(5)
    for _ in range(20):
        n = r.randint(2, 30)
        ls = [r.random() < 0.5 for _ in range(n)]
        ls[0], ls[1] = True, False
        ss = [r.choice((0.0, 0.3, 0.5, 0.9, 1.0, r.random())) for _ in range(n)]
        assert abs(auc(ls, ss) - auc_pairs(ls, ss)) < 1e-12


def pr_at(labels, scores, t):
    tp = sum(1 for l, s in zip(labels, scores) if l and s >= t)
    fp = sum(1 for l, s in zip(labels, scores) if not l and s >= t)
    pos = sum(1 for l in labels if l)
    return {'threshold': t, 'tp': tp, 'fp': fp,
            'precision': tp / (tp + fp) if tp + fp else None,
            'recall': tp / pos if pos else None}


def best_precision_at_recall(labels, scores, min_recall):
    """Sweep every distinct score as a threshold (predict duplicate when score >= t); among the
    thresholds whose recall is >= min_recall, the best precision (the highest threshold on ties)."""
    pos = sum(1 for l in labels if l)
    if pos == 0:
        return None
    pairs = sorted(zip(scores, labels), key=lambda x: -x[0])
    best = None
    tp = fp = 0
    i = 0
    while i < len(pairs):
        t = pairs[i][0]
        while i < len(pairs) and pairs[i][0] == t:
            tp += pairs[i][1]
            fp += not pairs[i][1]
            i += 1
        rec, prec = tp / pos, tp / (tp + fp)
        if rec >= min_recall and (best is None or prec > best['precision']):
            best = {'threshold': t, 'precision': prec, 'recall': rec, 'tp': tp, 'fp': fp}
    return best


RELIABILITY_BANDS = [0.0, 0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 1.0]


def reliability(labels, scores):
    """Per band of probability [lo, hi) (the last one closed): queries, mean probability, share
    that are duplicates. Queries answered with probability 0 (no indexed page) form their own row."""
    rows = []
    zero = [l for l, s in zip(labels, scores) if s == 0.0]
    if zero:
        rows.append({'band': '0 (new)', 'count': len(zero), 'mean_probability': 0.0,
                     'observed': sum(zero) / len(zero)})
    bands = RELIABILITY_BANDS
    for k in range(len(bands) - 1):
        lo, hi = bands[k], bands[k + 1]
        idx = [i for i, s in enumerate(scores) if s > 0.0 and lo <= s and (s < hi or (hi == 1.0 and s <= hi))]
        if not idx:
            continue
        rows.append({'band': '[%g, %g%s' % (lo, hi, ']' if hi == 1.0 else ')'), 'count': len(idx),
                     'mean_probability': sum(scores[i] for i in idx) / len(idx),
                     'observed': sum(labels[i] for i in idx) / len(idx)})
    return rows


def brier(labels, scores):
    return sum((s - (1.0 if l else 0.0)) ** 2 for l, s in zip(labels, scores)) / len(labels)


def load(dir_, pred_path):
    queries = [json.loads(l) for l in open(os.path.join(dir_, 'queries.jsonl')) if l.strip()]
    preds = [json.loads(l) for l in open(pred_path) if l.strip()]
    problems = []
    if len(preds) != len(queries):
        problems.append('%d predictions for %d queries' % (len(preds), len(queries)))
    scores, errors, mismatched, dup_of = [], 0, 0, []
    for i, q in enumerate(queries):
        p = preds[i] if i < len(preds) else {'error': 'missing line'}
        if p.get('url') is not None and p.get('url') != q['url']:
            mismatched += 1
        prob = p.get('probability')
        if 'error' in p or not isinstance(prob, (int, float)):
            errors += 1
            prob = 0.0
        scores.append(float(prob))
        dup_of.append(p.get('duplicate_of'))
    if mismatched:
        problems.append('%d lines whose url differs from the query' % mismatched)
    return queries, scores, errors, problems, dup_of


def fmt(x, digits=3):
    if x is None:
        return '-'
    if isinstance(x, float):
        return '%.*f' % (digits, x)
    return str(x)


def representatives(docs_path, dup_of):
    """Of the answers that name a page: how many name one flagged exact_signature_unique_b true."""
    flags = {}
    with open(docs_path) as f:
        for line in f:
            if line.strip():
                d = json.loads(line)
                flags[str(d.get('id'))] = d.get('exact_signature_unique_b')
    named = [d['id'] for d in dup_of if isinstance(d, dict) and d.get('id') is not None]
    shown = sum(1 for i in named if flags.get(str(i)) is True)
    return {'named': len(named), 'flagged_unique': shown,
            'share': shown / len(named) if named else None}


def score(dir_, pred_path, name, docs=None):
    queries, scores, errors, problems, dup_of = load(dir_, pred_path)
    labels = [bool(q['duplicate']) for q in queries]
    res = {
        'name': name, 'predictions': os.path.abspath(pred_path), 'queries': len(queries),
        'duplicates': sum(labels), 'errors': errors, 'problems': problems,
        'auc': auc(labels, scores),
        'at_thresholds': [pr_at(labels, scores, t) for t in THRESHOLDS],
        'best_precision_at_recall_%g' % MIN_RECALL: best_precision_at_recall(labels, scores, MIN_RECALL),
        'brier': brier(labels, scores) if labels else None,
        'reliability': reliability(labels, scores),
        # Every duplicate the predictor names a page for, whatever the probability.
        'recall_ceiling': (sum(1 for l, s in zip(labels, scores) if l and s > 0.0) / max(1, sum(labels))),
    }
    # the indexed page named by the prediction has the query's content (when the predictor names one)
    named = right = 0
    for q, s, d in zip(queries, scores, dup_of):
        if q['duplicate'] and s >= SHARE_AT and isinstance(d, dict) and d.get('id') is not None:
            named += 1
            right += d['id'] in set(q.get('same_content_ids', []))
    res['duplicate_of_checked'] = named
    res['duplicate_of_right'] = right
    if docs:
        res['duplicate_of_representative'] = representatives(docs, dup_of)

    def group(key):
        out = {}
        keys = {}
        for q in queries:
            keys.setdefault(q[key], set()).add(bool(q['duplicate']))
        # duplicate groups first, then mixed ones, then new ones
        for k in sorted(keys, key=lambda k: (-sum(keys[k]) + len(keys[k]) - 1 + 2 * (True not in keys[k]), k)):
            idx = [i for i, q in enumerate(queries) if q[key] == k]
            ls = [labels[i] for i in idx]
            ss = [scores[i] for i in idx]
            n_pos = sum(ls)
            g = {'count': len(idx), 'label': 'dup' if n_pos == len(ls) else 'new' if n_pos == 0 else 'mixed',
                 'share_at_%g' % SHARE_AT: sum(s >= SHARE_AT for s in ss) / len(ss),
                 'mean_probability': sum(ss) / len(ss),
                 'auc_within': auc(ls, ss)}
            # a one-label group against every query of the other label elsewhere
            if g['label'] != 'mixed':
                other = [i for i, q in enumerate(queries) if q[key] != k and labels[i] != ls[0]]
                g['auc_vs_other_label'] = auc(ls + [labels[i] for i in other], ss + [scores[i] for i in other])
            else:
                g['auc_vs_other_label'] = None
            out[k] = g
        return out
    res['patterns'] = group('pattern')
    res['site_kinds'] = group('site_kind')
    res['sites'] = group('site') if all('site' in q for q in queries) else {}
    return res


def print_report(res):
    print('## %s\n' % res['name'])
    print('%d queries (%d duplicates); ROC AUC %s; %d errors counted as 0%s\n' % (
        res['queries'], res['duplicates'], fmt(res['auc'], 4), res['errors'],
        ''.join('; ' + p for p in res['problems'])))
    print('| threshold | precision | recall | TP | FP |')
    print('|---:|---:|---:|---:|---:|')
    for r in res['at_thresholds']:
        print('| %g | %s | %s | %d | %d |' % (r['threshold'], fmt(r['precision'], 4), fmt(r['recall'], 4), r['tp'], r['fp']))
    print('\nrecall ceiling (a page named, any probability): %.4f; Brier score %s' % (
        res['recall_ceiling'], fmt(res['brier'], 4)))
    print('\n| probability | queries | mean probability | duplicates |')
    print('|---|---:|---:|---:|')
    for r in res['reliability']:
        print('| %s | %d | %.4f | %.4f |' % (r['band'], r['count'], r['mean_probability'], r['observed']))
    rep = res.get('duplicate_of_representative')
    if rep and rep['named']:
        print('\nduplicate_of is the page the index shows (flagged unique) in %d of %d answers (%.4f)'
              % (rep['flagged_unique'], rep['named'], rep['share']))
    b = res['best_precision_at_recall_%g' % MIN_RECALL]
    print('\nbest precision at recall >= %g: %s' % (MIN_RECALL, 'none' if b is None else
          '%.4f (recall %.4f) at threshold %.6g' % (b['precision'], b['recall'], b['threshold'])))
    if res['duplicate_of_checked']:
        print('duplicate_of names a page with the same content for %d of %d duplicates predicted at %g'
              % (res['duplicate_of_right'], res['duplicate_of_checked'], SHARE_AT))
    k = 'share_at_%g' % SHARE_AT
    for title, key in (('pattern', 'patterns'), ('site kind', 'site_kinds')):
        print('\n| %s | count | label | share >= %g | mean p | AUC vs other label |' % (title, SHARE_AT))
        print('|---|---:|---|---:|---:|---:|')
        for name, g in res[key].items():
            print('| %s | %d | %s | %.3f | %.3f | %s |' % (name, g['count'], g['label'], g[k],
                  g['mean_probability'], fmt(g['auc_within'] if g['label'] == 'mixed' else g['auc_vs_other_label'], 4)))
    print('\nshare >= %g: recall for `dup` patterns, false-alarm rate for `new` ones.' % SHARE_AT)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('dir')
    ap.add_argument('predictions')
    ap.add_argument('--name', help='name of the predictor (default: the predictions file stem)')
    ap.add_argument('--quiet', action='store_true', help='write the JSON, print one line')
    ap.add_argument('--docs', help='the decided documents (JSON Lines) the predictions were made from')
    a = ap.parse_args()
    self_check()
    name = a.name or os.path.splitext(os.path.basename(a.predictions))[0]
    res = score(a.dir, a.predictions, name, a.docs)
    out = os.path.join(a.dir, 'score-%s.json' % name)
    with open(out, 'w') as f:
        json.dump(res, f, indent=1)
    if a.quiet:
        b = res['best_precision_at_recall_%g' % MIN_RECALL]
        print('%s: AUC %s, best precision at recall >= %g: %s' % (name, fmt(res['auc'], 4), MIN_RECALL,
              '-' if b is None else '%.4f' % b['precision']))
    else:
        print_report(res)
        print('\n(written to %s)' % out)
    if res['problems']:
        print('score: ' + '; '.join(res['problems']), file=sys.stderr)


if __name__ == '__main__':
    main()
