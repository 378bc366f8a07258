#!/usr/bin/env bash
# Times a spin kernel four ways (ncu, plain events, blocking-kernel events, graph replays) and
# prints a table; run on a GPU from the repository root. Its output is in docs/calibration.md.
I=0,100,311,1038,3115
python3 docs/below-10us.py $I > /tmp/b.json 2>&1; cat /tmp/b.json | tail -3
ncu --clock-control none --metrics gpu__time_duration.sum --csv -k regex:'^spin$' python3 docs/below-10us.py $I ncu > /tmp/ncu.csv 2>/tmp/ncu.err; echo "ncu rc=$?"; tail -2 /tmp/ncu.err
python3 - <<'PY'
import json, csv, numpy as np
b = json.load(open('/tmp/b.json'))
rows = [r for r in csv.reader(open('/tmp/ncu.csv')) if len(r) > 3 and r[-3] == 'gpu__time_duration.sum']
vals = [float(r[-1].replace(',', '')) * {'nsecond':1e-3,'usecond':1,'msecond':1e3}.get(r[-2], 1e-3) for r in rows]
print("launches seen by ncu:", len(vals))
keys = list(b.keys())
print(f"{'iters':>6} {'ncu us':>8} {'plain':>8} {'blocked':>8} {'graph':>8}")
for i, k in enumerate(keys):
    g = vals[i*35:(i+1)*35][10:]
    n = np.median(g) if g else float('nan')
    p, bl, gr = b[k]
    print(f"{k:>6} {n:8.3f} {p:8.3f} {bl:8.3f} {gr:8.3f}")
PY
