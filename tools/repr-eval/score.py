#!/usr/bin/env python3
"""Is the representative of each group the cleanest member? (issue 27; README.md in this directory)

    python3 score.py DIR OUT.jsonl [--name NAME] [--examples N]

DIR holds the simulated crawl written by `tools/urls-eval/simulate.py --truth-urls` (truth-urls.jsonl:
per crawled document its content id, whether its URL is the content's primary URL, and the variant
kinds applied to make it). OUT.jsonl is `solr-dedup run --input DIR/crawl.jsonl --output-format docs`.
Writes DIR/repr-NAME.json and prints a summary.

Groups per dimension: exact (equal exact_signature_l), near (equal near_group_s), fuzzy (equal
fuzzy_signature_l), www (equal URL up to one leading www.), http (equal URL up to http/https); only
groups of two or more members. A group is *scored* when all its members have one content id (the
others are counted as mixed). Its cleanest members are:

  - strict: the member whose URL is the content's primary URL; when no member is primary, the
    members with the fewest variant kinds applied (all of them on a tie);
  - lenient: the same, but the kinds `scheme` and `www` do not count (https versus http and www.
    versus the bare host are left to the preference order), so a member whose only variants are
    those counts as clean as the primary.

The representative (`*_unique_b: true`) is right when it is one of the cleanest members.

It also replays today's order (https, then www., then the shorter normalised URL, then the smaller
normalised URL, then the smaller id) on each group, checks that it picks the representative the
binary picked, and counts the rule that separated the winner from the runner-up.

Standard library only.
"""
import argparse
import json
import os
import sys
from collections import Counter, defaultdict
from urllib.parse import urlsplit, urlunsplit

DIMENSIONS = ['exact', 'near', 'fuzzy', 'www', 'http']
FLAG = {'exact': 'exact_signature_unique_b', 'near': 'near_unique_b', 'fuzzy': 'fuzzy_signature_unique_b',
        'www': 'www_unique_b', 'http': 'http_unique_b'}
KINDS = ['sid', 'jsessionid', 'tracking', 'print', 'default-value', 'index-html', 'host-case',
         'alias-host', 'www', 'scheme', 'param-order']
NEUTRAL_LENIENT = {'scheme', 'www'}
RULES = ['https', 'www', 'shorter', 'smaller URL', 'id']


def normalise(url):
    """WHATWG-like normal form for the simulated URLs (ASCII, no ports, no fragments): scheme and
    host lower case, empty path '/'."""
    p = urlsplit(url.strip())
    return urlunsplit((p.scheme.lower(), p.netloc.lower(), p.path or '/', p.query, ''))


def www_key(norm):
    p = urlsplit(norm)
    host = p.netloc
    if len(host) > 4 and host.startswith('www.'):
        host = host[4:]
    return urlunsplit((p.scheme, host, p.path, p.query, ''))


def http_key(norm):
    p = urlsplit(norm)
    if p.scheme not in ('http', 'https'):
        return None
    return norm[len(p.scheme) + 1:]


def order_key(doc, prefer_https=True, prefer_www=True):
    """Today's order as a tuple; smaller is preferred (src/engine/url_key.rs)."""
    n = doc['norm']
    p = urlsplit(n)
    scheme_rank = 0 if (p.scheme == 'https') == prefer_https else 1
    has_www = len(p.netloc) > 4 and p.netloc.startswith('www.')
    return (scheme_rank, has_www != prefer_www, len(n), n, doc['id'])


def deciding_rule(members):
    ranked = sorted(members, key=order_key)
    a, b = order_key(ranked[0]), order_key(ranked[1])
    for i, rule in enumerate(RULES):
        if a[i] != b[i]:
            return ranked[0], rule
    return ranked[0], 'id'


def dirt(doc, lenient):
    kinds = doc['truth']['variant_kinds']
    if lenient:
        kinds = [k for k in kinds if k not in NEUTRAL_LENIENT]
    return len(kinds)


def cleanest(members, lenient):
    prim = [m for m in members if m['truth']['primary']]
    if lenient:
        best = min(dirt(m, True) for m in members)
        if prim:
            best = 0 if best == 0 else best  # the primary has 0
        return {m['id'] for m in members if dirt(m, True) == best}
    if prim:
        return {m['id'] for m in prim}
    best = min(dirt(m, False) for m in members)
    return {m['id'] for m in members if dirt(m, False) == best}


def load_truth(folder):
    """The simulator's truth in `folder`: each URL's record of `truth-urls.jsonl`, by id."""
    truth = {}
    with open(os.path.join(folder, 'truth-urls.jsonl')) as f:
        for line in f:
            t = json.loads(line)
            truth[t['id']] = t
    return truth


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('dir')
    ap.add_argument('out')
    ap.add_argument('--name', default='default')
    ap.add_argument('--examples', type=int, default=8)
    a = ap.parse_args()

    truth = load_truth(a.dir)
    docs = []
    with open(a.out) as f:
        for line in f:
            d = json.loads(line)
            t = truth.get(d['id'])
            if t is None:
                sys.exit('score: %s is not in truth-urls.jsonl' % d['id'])
            norm = normalise(d['sku'])
            docs.append({'id': d['id'], 'url': d['sku'], 'norm': norm, 'truth': t,
                         'flags': {dim: d.get(FLAG[dim]) for dim in DIMENSIONS},
                         'keys': {'exact': d.get('exact_signature_l'), 'near': d.get('near_group_s'),
                                  'fuzzy': d.get('fuzzy_signature_l'), 'www': www_key(norm),
                                  'http': http_key(norm)}})
    if len(docs) != len(truth):
        sys.exit('score: %d documents in %s, %d in the truth' % (len(docs), a.out, len(truth)))

    result = {'name': a.name, 'documents': len(docs), 'dimensions': {}}
    for dim in DIMENSIONS:
        if not any(d['flags'][dim] is not None for d in docs):
            continue  # not decided by this run (--dimensions)
        groups = defaultdict(list)
        for d in docs:
            k = d['keys'][dim]
            if k is not None:
                groups[k].append(d)
        groups = [g for g in groups.values() if len(g) > 1]
        r = {'groups': len(groups), 'mixed_groups': 0, 'scored': 0, 'bad_flag_groups': 0,
             'right_strict': 0, 'right_lenient': 0, 'replay_agrees': 0,
             'groups_with_primary': 0, 'scored_no_alias': 0, 'right_strict_no_alias': 0,
             'right_lenient_no_alias': 0,
             'wrong_strict_kinds': Counter(), 'wrong_lenient_kinds': Counter(),
             'wrong_strict_sites': Counter(), 'deciding_rule': Counter(),
             'deciding_rule_wrong_strict': Counter(), 'deciding_rule_wrong_lenient': Counter(),
             'examples_wrong': [], 'examples_wrong_lenient': []}
        for g in sorted(groups, key=lambda g: min(m['id'] for m in g)):
            reps = [m for m in g if m['flags'][dim] is True]
            if len(reps) != 1:
                r['bad_flag_groups'] += 1
                continue
            rep = reps[0]
            winner, rule = deciding_rule(g)
            r['replay_agrees'] += winner['id'] == rep['id']
            if len({m['truth']['content'] for m in g}) > 1:
                r['mixed_groups'] += 1
                continue
            r['scored'] += 1
            r['groups_with_primary'] += any(m['truth']['primary'] for m in g)
            r['deciding_rule'][rule] += 1
            ok_s = rep['id'] in cleanest(g, False)
            ok_l = rep['id'] in cleanest(g, True)
            r['right_strict'] += ok_s
            r['right_lenient'] += ok_l
            if not any('alias-host' in m['truth']['variant_kinds'] for m in g):
                r['scored_no_alias'] += 1
                r['right_strict_no_alias'] += ok_s
                r['right_lenient_no_alias'] += ok_l
            if not ok_s:
                r['deciding_rule_wrong_strict'][rule] += 1
                r['wrong_strict_sites'][rep['truth']['site']] += 1
                kinds = rep['truth']['variant_kinds']
                for k in kinds or ['(none)']:
                    r['wrong_strict_kinds'][k] += 1
                if len(r['examples_wrong']) < a.examples:
                    best = sorted(cleanest(g, False))
                    r['examples_wrong'].append({
                        'representative': rep['url'], 'kinds': kinds, 'rule': rule,
                        'cleanest': [m['url'] for m in g if m['id'] in best]})
            if not ok_l:
                r['deciding_rule_wrong_lenient'][rule] += 1
                if len(r['examples_wrong_lenient']) < a.examples:
                    best = cleanest(g, True)
                    r['examples_wrong_lenient'].append({
                        'representative': rep['url'], 'kinds': rep['truth']['variant_kinds'], 'rule': rule,
                        'cleanest': [m['url'] for m in g if m['id'] in best]})
                for k in [k for k in rep['truth']['variant_kinds'] if k not in NEUTRAL_LENIENT] or ['(none)']:
                    r['wrong_lenient_kinds'][k] += 1
        for k in ('wrong_strict_kinds', 'wrong_lenient_kinds', 'wrong_strict_sites', 'deciding_rule',
                  'deciding_rule_wrong_strict', 'deciding_rule_wrong_lenient'):
            r[k] = dict(r[k].most_common())
        r['share_strict'] = round(r['right_strict'] / r['scored'], 4) if r['scored'] else None
        r['share_lenient'] = round(r['right_lenient'] / r['scored'], 4) if r['scored'] else None
        n = r['scored_no_alias']
        r['share_strict_no_alias'] = round(r['right_strict_no_alias'] / n, 4) if n else None
        r['share_lenient_no_alias'] = round(r['right_lenient_no_alias'] / n, 4) if n else None
        result['dimensions'][dim] = r

    path = os.path.join(a.dir, 'repr-%s.json' % a.name)
    with open(path, 'w') as f:
        json.dump(result, f, indent=1)
    print('repr-eval %s: %d documents (%s)' % (a.name, len(docs), path))
    print('%-6s %7s %6s %7s %9s %9s %8s  %s' % ('dim', 'groups', 'mixed', 'scored', 'strict', 'lenient',
                                               'replay', 'deciding rule (scored groups)'))
    for dim, r in result['dimensions'].items():
        pct = lambda x: '-' if x is None else '%.2f %%' % (100 * x)
        print('%-6s %7d %6d %7d %9s %9s %8s  %s' % (
            dim, r['groups'], r['mixed_groups'], r['scored'], pct(r['share_strict']),
            pct(r['share_lenient']), '%d/%d' % (r['replay_agrees'], r['groups'] - r['bad_flag_groups']),
            ', '.join('%s %d' % kv for kv in r['deciding_rule'].items())))
        if r['bad_flag_groups']:
            print('       %d groups without exactly one representative' % r['bad_flag_groups'])
    for dim, r in result['dimensions'].items():
        print('%s without alias-host members: %d groups, strict %.2f %%, lenient %.2f %%' % (
            dim, r['scored_no_alias'], 100 * (r['share_strict_no_alias'] or 0),
            100 * (r['share_lenient_no_alias'] or 0)))
    for dim in [d for d in ('exact', 'www', 'http', 'near') if d in result['dimensions']]:
        r = result['dimensions'][dim]
        print('%s wrong (strict) decided by: %s' % (
            dim, ', '.join('%s %d' % kv for kv in r['deciding_rule_wrong_strict'].items()) or '-'))
        print('%s wrong (strict) by kind of the representative: %s' % (
            dim, ', '.join('%s %d' % kv for kv in r['wrong_strict_kinds'].items()) or '-'))
        print('%s wrong (lenient) decided by: %s' % (
            dim, ', '.join('%s %d' % kv for kv in r['deciding_rule_wrong_lenient'].items()) or '-'))
        print('%s wrong (lenient) by kind: %s' % (
            dim, ', '.join('%s %d' % kv for kv in r['wrong_lenient_kinds'].items()) or '-'))
    return 0


if __name__ == '__main__':
    sys.exit(main())
