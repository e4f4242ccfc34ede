#!/usr/bin/env python3
"""Build a composite CSV: for each lambda take the rows of the named variant.
   composite.py OUT.csv 1:base,3:base,...,100:l16,...  (base = docs/results/rd-baseline.csv)
   An entry 'img@lambda:variant' overrides for one image."""
import csv, sys, os
HERE = os.path.dirname(os.path.abspath(__file__))
def path(v):
    return os.path.join(HERE, '..', 'rd-baseline.csv') if v == 'base' else os.path.join(HERE, 'csv', v + '.csv')
out, spec = sys.argv[1], sys.argv[2]
rules = dict(e.split(':') for e in spec.split(','))
rows = {}
cache = {}
for key, v in rules.items():
    if v not in cache:
        cache[v] = {(r['image'], r['param']): r for r in csv.DictReader(open(path(v)))}
imgs = sorted({i for i, _ in cache[rules['1']]} | {i for i, _ in cache[rules['1000']]})
base = {(r['image'], r['param']): r for r in csv.DictReader(open(path('base')))}
imgs = sorted({i for i, _ in base})
w = csv.DictWriter(open(out, 'w', newline=''), fieldnames=list(next(iter(base.values())).keys()))
w.writeheader()
for i in imgs:
    for lam in ['1', '3', '10', '30', '100', '300', '1000']:
        v = rules.get(i + '@' + lam, rules[lam])
        r = cache.setdefault(v, {(r['image'], r['param']): r for r in csv.DictReader(open(path(v)))}).get((i, 'lambda=' + lam))
        if r is None:
            print('missing', v, i, lam, file=sys.stderr)
        else:
            w.writerow(r)
