"""Markdown table of run-scaling-ab.sh's JSON lines: medians per build, diskcache and the floor,
with the ratios diskcache / build (medians of the rounds; higher is faster)."""
import json,statistics,collections,sys
d=collections.defaultdict(dict)
for f in sys.argv[1:]:
    for l in open(f):
        r=json.loads(l); v=r.get('ns_per_op', r.get('bytes'))
        d[(r['entries'],r['workload'])].setdefault(r['impl'],[]).append(v)
def fmt(ns, wl):
    if wl.startswith('index-bytes'): return f"{ns:.0f}"
    if ns>=1e6: return f"{ns/1e6:.1f} ms"
    return f"{ns/1e3:.1f} µs"
print("| entries | workload | Stash A | Stash B | diskcache | A ratio | B ratio | SQLite floor | rounds |")
print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
order=['get-hit','get-miss','set','set-full','delete','hit-write-on-close','set-immediate','set-full-immediate','delete-immediate','open','index-bytes-per-entry']
for (n,wl) in sorted(d, key=lambda k:(k[0], order.index(k[1]) if k[1] in order else 99)):
    m={k:statistics.median(v) for k,v in d[(n,wl)].items()}
    b=m.get('stash-a'); a=m.get('stash-b'); dc=m.get('diskcache'); fl=m.get('sqlite-floor')
    base=wl.replace('-immediate','')
    dc=dc or (statistics.median(d[(n,base)]['diskcache']) if 'diskcache' in d.get((n,base),{}) else None)
    r=lambda x: f"{dc/x:.2f}×" if dc and x and not wl.startswith('index') else ""
    rounds=len(d[(n,wl)].get('stash-b',[]))
    print(f"| {n:,} | {wl} | {fmt(b,wl) if b else '—'} | {fmt(a,wl) if a else '—'} | {fmt(dc,wl) if dc else '—'} | {r(b)} | {r(a)} | {fmt(fl,wl) if fl else '—'} | {rounds} |")
