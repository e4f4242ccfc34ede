#!/usr/bin/env python3
"""Per-(image, lambda) comparison of variants: J = SSE + lambda * bits relative to baseline,
and monotonicity of bytes in lambda."""
import csv, sys, os, collections
HERE = os.path.dirname(os.path.abspath(__file__))
def load(p):
    d = {}
    for r in csv.DictReader(open(p)):
        lam = float(r['param'].split('=')[1])
        n = int(r['width']) * int(r['height'])
        sse = n * 255**2 / 10**(float(r['psnr']) / 10)
        d[(r['image'], lam)] = dict(bytes=int(r['bytes']), sse=sse, J=sse + lam * 8 * int(r['bytes']), t=float(r['enc_seconds']))
    return d
V = {'l4 (base)': os.path.join(HERE, '..', 'rd-baseline.csv')}
for n in sys.argv[1:]:
    V[n] = os.path.join(HERE, 'csv', n + '.csv')
data = {k: load(p) for k, p in V.items()}
base = data['l4 (base)']
lams = sorted({l for _, l in base})
imgs = sorted({i for i, _ in base})
print('relative J (%) vs base, per lambda, averaged over images present in both')
print('%-10s' % 'variant' + ''.join('%9g' % l for l in lams))
for k, d in data.items():
    s = '%-10s' % k
    for l in lams:
        v = [100 * (d[(i, l)]['J'] / base[(i, l)]['J'] - 1) for i in imgs if (i, l) in d]
        s += '%9s' % ('%+.2f/%d' % (sum(v) / len(v), len(v)) if v else '-')
    print(s)
print('\nper image relative J (%) vs base')
for k, d in data.items():
    print(k)
    for i in imgs:
        print('  %-7s' % i + ''.join('%8s' % ('%+.2f' % (100 * (d[(i, l)]['J'] / base[(i, l)]['J'] - 1)) if (i, l) in d else '-') for l in lams))
print('\nmonotone bytes (decreasing with lambda)?')
for k, d in data.items():
    bad = []
    for i in imgs:
        b = [d[(i, l)]['bytes'] for l in lams if (i, l) in d]
        if any(x <= y for x, y in zip(b, b[1:])):
            bad.append(i)
    print('  %-10s %s' % (k, 'yes' if not bad else 'NO: ' + ','.join(bad)))
print('\ncamera lambda=10 enc seconds:', {k: d.get(('camera', 10.0), {}).get('t') for k, d in data.items()})
