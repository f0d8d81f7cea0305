#!/usr/bin/env python3
"""The floor plan of src/, checked from the code's own includes.

src/ holds one folder per unit (src/README.md).  Each unit's README.md names
its public headers on a line starting "Public headers:"; every other header
of the unit is private to it.  The rules:
  1. no file includes another unit's private header;
  2. the units' include graph has no circle;
  3. at most MAX_UP includes point upward, against the order of the units
     in src/README.md (lowest first);
  4. at most MAX_ROOT files sit at src/'s root.
Exit 0 when every rule holds, 1 with one line per breach otherwise;
--graph prints the unit graph.
"""
import os, re, sys

MAX_UP = 3
MAX_ROOT = 4
top = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith('-')
                      else os.path.join(os.path.dirname(__file__), '..', '..'))
src = os.path.join(top, 'src')

def units_in_order():
    """The unit folders, lowest first, as src/README.md's table lists them."""
    order = []
    for line in open(os.path.join(src, 'README.md')):
        m = re.match(r'\|\s*`([a-z/]+)/`\s*\|', line)
        if m:
            order.append(m.group(1))
    return order

order = units_in_order()
# kernels/ sits beside src/: below the backends that launch it, above the
# op table and core/ whose headers it shares; its face is bpk.h.
order.insert(order.index('backends'), 'kernels')
rank = {u: i for i, u in enumerate(order)}

def unit_of(path):
    rel = os.path.relpath(path, src)
    if rel.startswith('..'):
        return 'kernels' if os.path.relpath(path, top).startswith('kernels') else None
    parts = rel.split(os.sep)[:-1]
    # the deepest listed unit folder holding the file
    for n in range(len(parts), 0, -1):
        u = '/'.join(parts[:n])
        if u in rank:
            return u
    return '.' if not parts else parts[0]

def public_headers(u):
    if u == 'kernels':
        return {'bpk.h'}
    pub = set()
    readme = os.path.join(src, u, 'README.md')
    if os.path.exists(readme):
        for line in open(readme):
            if line.startswith('Public headers: all'):
                return None  # every header of the unit
            if line.startswith('Public headers:'):
                pub |= set(re.findall(r'`([A-Za-z0-9_]+\.h)`', line))
    return pub

files = []
for d, _, fs in os.walk(src):
    files += [os.path.join(d, f) for f in fs if f.endswith(('.c', '.h'))]
by_name = {}
for f in files:
    by_name.setdefault(os.path.basename(f), []).append(f)
search = sorted({os.path.dirname(f) for f in files}) + [os.path.join(top, 'kernels')]

def resolve(inc, frm):
    cand = os.path.normpath(os.path.join(os.path.dirname(frm), inc))
    if os.path.exists(cand):
        return cand
    for d in search:
        cand = os.path.join(d, inc)
        if os.path.exists(cand):
            return cand
    return None

kfiles = [os.path.join(top, 'kernels', f) for f in os.listdir(os.path.join(top, 'kernels'))
          if f.endswith(('.h', '.cuh', '.cu'))]
bad = []
edges = {}
up = []
pub = {u: public_headers(u) for u in order}
for f in files + kfiles:
    uf = unit_of(f)
    for line in open(f, errors='replace'):
        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if not m:
            continue
        t = resolve(m.group(1), f)
        if t is None or t.endswith('config.h'):
            continue
        ut = unit_of(t)
        if ut in (None, uf):
            continue
        rel = os.path.relpath(f, top)
        if pub.get(ut) is not None and os.path.basename(t) not in pub[ut]:
            bad.append(f'{rel}: includes {os.path.relpath(t, top)}, private to {ut}/')
        edges.setdefault(uf, set()).add(ut)
        if uf in rank and ut in rank and rank[ut] > rank[uf]:
            up.append(f'{rel} -> {os.path.relpath(t, top)}')

# circles between units (Tarjan's strongly connected components)
index, low, stack, on, sccs = {}, {}, [], set(), []
def strong(v):
    index[v] = low[v] = len(index); stack.append(v); on.add(v)
    for w in edges.get(v, ()):
        if w not in index:
            strong(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        c = []
        while True:
            w = stack.pop(); on.discard(w); c.append(w)
            if w == v:
                break
        if len(c) > 1:
            sccs.append(sorted(c))
for v in list(edges):
    if v not in index:
        strong(v)
for c in sccs:
    bad.append('circle between units: ' + ' <-> '.join(c))
if len(up) > MAX_UP:
    bad.append(f'{len(up)} includes point upward (at most {MAX_UP}): ' + '; '.join(up))
root = [f for f in os.listdir(src) if os.path.isfile(os.path.join(src, f))
        and f.endswith(('.c', '.h'))]
if len(root) > MAX_ROOT:
    bad.append(f'{len(root)} source files at src/ (at most {MAX_ROOT}): ' + ' '.join(sorted(root)))
for u in order:
    if u != 'kernels' and not os.path.exists(os.path.join(src, u, 'README.md')):
        bad.append(f'src/{u}/ has no README.md')
if '--graph' in sys.argv:
    for u in order:
        print(f'{u} -> ' + ' '.join(sorted(edges.get(u, ()), key=lambda x: rank.get(x, -1))))
    for e in up:
        print('upward:', e)
for b in bad:
    print('layout:', b)
print(f'layout: {len(order)} units, {sum(len(v) for v in edges.values())} unit edges, '
      f'{len(up)} upward, {len(sccs)} circles, {len(bad)} breaches')
sys.exit(1 if bad else 0)
