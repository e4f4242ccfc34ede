#!/usr/bin/env python3
"""BD-rate vs j2k per image and averages (all 8 / 7 without grass / 5 screening) per variant."""
import subprocess, os, sys, re
HERE = os.path.dirname(os.path.abspath(__file__))
A = os.path.join(HERE, '..', '..', '..', '..', 'shared', 'anchors', 'public-anchors.csv')
B = os.path.join(HERE, '..', '..', '..', 'scripts', 'bdrate')
L = ['1', '3', '10', '30', '100', '300', '1000']
V = [('T=lambda/4 (current)', 'base'), ('T=lambda', 'l1'), ('T=lambda/16', 'l16'), ('T=lambda/64', 'l64'),
     ('T=0', 'c0'), ('T=min(lambda/4,16)', 'base:cap16'), ('T=min(lambda/4,8)', 'base:cap8'),
     ('T=lambda/16, -d 2048', 'l16d2048')]
S = ['ascent', 'brick', 'camera', 'coins', 'grass', 'moon', 'page', 'text']
print('| variant | ' + ' | '.join(S) + ' | avg 8 | avg 7 (no grass) | avg 5 (screen) |')
print('|' + '---|' * (len(S) + 4))
for name, v in V:
    if ':' in v:
        lo, hi = v.split(':')
        spec = ','.join('%s:%s' % (l, lo if int(l) <= 30 else hi) for l in L)
    else:
        spec = ','.join('%s:%s' % (l, v) for l in L)
    subprocess.run([sys.executable, os.path.join(HERE, 'composite.py'), '/tmp/tab.csv', spec], stderr=subprocess.DEVNULL, check=True)
    # drop images with fewer than 7 points
    import csv, collections
    rows = list(csv.DictReader(open('/tmp/tab.csv')))
    n = collections.Counter(r['image'] for r in rows)
    with open('/tmp/tab2.csv', 'w', newline='') as f:
        w = csv.DictWriter(f, fieldnames=rows[0].keys()); w.writeheader()
        for r in rows:
            if n[r['image']] == 7: w.writerow(r)
    out = subprocess.run([B, '--test', 'mmp', '--ref', 'j2k', '/tmp/tab2.csv', A], capture_output=True, text=True).stdout
    bd = {m.group(1): float(m.group(2)) for m in re.finditer(r'^(\w+)\s+BD-rate\s+([-+\d.]+)', out, re.M)}
    def avg(ims):
        return '%.2f' % (sum(bd[i] for i in ims) / len(ims)) if all(i in bd for i in ims) else '-'
    print('| %s | ' % name + ' | '.join('%.2f' % bd[i] if i in bd else '-' for i in S) + ' | %s | %s | %s |' % (
        avg(S), avg([s for s in S if s != 'grass']), avg(['camera', 'ascent', 'page', 'text', 'moon'])))
