#!/usr/bin/env python3
"""Writes large op ledgers for tests/cli/ledger_scale.sh into DIR:

  a.ledger, b.ledger   N ops each that never pair, not even by base name
      (A's in module "a.layers", B's in "b.layers", other hashes): the
      alignment's replaced block is all of both
  c.ledger             A's N ops with every 1000th op's output changed and
      a cast inserted after op N/2: N-1 pairs plus one op only in C
  caps.ledger          5N/4 ops of 4 outputs, every output captured under a
      name of its own: 5N captures (the captures file is not read by diff)

usage: hostile_ledger.py DIR N
The hashes are arbitrary hex (diff compares them; nothing recomputes them
without captures)."""
import sys

HEAD = ('{"format":"bitprobe-ledger","version":1,"hash":"fmix64-sum/1",'
        '"torch":"hand-written"%s}\n')
T = ('{"dtype":"F32","shape":[64],"stride":[1],"device":"cpu","nbytes":256,'
     '"hash":"%016x"%s}')


def op(seq, name, module, h_in, h_out, cap=""):
    tin = T % (h_in, "") if h_in is not None else None
    return ('{"seq":%d,"op":"%s","module":"%s","args":[%s],"in":[%s],"out":[%s]}\n'
            % (seq, name, module, '{"t":0}' if tin else "", tin or "", T % (h_out, cap)))


def write(path, ops, captures=0, capfile=""):
    with open(path, "w") as f:
        f.write(HEAD % (',"captures":"%s"' % capfile if capfile else ""))
        f.writelines(ops)
        f.write('{"end":{"records":%d,"captures":%d,"status":"ok"}}\n' % (len(ops), captures))


def stream(n, module, salt=0, changed=lambda i: False):
    """n ops, each reading the one before; salt changes every hash (another
    program), changed(i) op i's output alone."""
    names = ("aten::mul.Tensor", "aten::add.Tensor", "aten::exp", "aten::sum.dim_IntList")
    out, prev = [], None
    for i in range(n):
        h = ((i + 1) * 0x9E3779B97F4A7C15 + salt) & (2 ** 64 - 1)
        if changed(i):
            h ^= 1
        out.append(op(i, names[i % 4], module, prev, h))
        prev = h
    return out


def main():
    d, n = sys.argv[1], int(sys.argv[2])
    write(d + "/a.ledger", stream(n, "a.layers"))
    write(d + "/b.ledger", stream(n, "b.layers", salt=12345))
    c = stream(n, "a.layers", changed=lambda i: i % 1000 == 999)
    cast = op(0, "aten::_to_copy", "a.layers", 1, 2)
    c = c[:n // 2] + [cast] + c[n // 2:]
    c = [line.replace('"seq":%d,' % int(line[7:line.index(",")]), '"seq":%d,' % k, 1)
         for k, line in enumerate(c)]
    write(d + "/c.ledger", c)
    m = 5 * n // 4
    caps = []
    for i in range(m):
        outs = ",".join(T % (4 * i + k + 1, ',"capture":"%d.out%d"' % (i, k)) for k in range(4))
        caps.append('{"seq":%d,"op":"aten::split","module":"m","args":[],"in":[],"out":[%s]}\n'
                    % (i, outs))
    write(d + "/caps.ledger", caps, captures=4 * m, capfile="caps.safetensors")


if __name__ == "__main__":
    main()
