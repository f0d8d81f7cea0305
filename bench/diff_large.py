#!/usr/bin/env python3
"""bitprobe diff on large safetensors files, next to references from the
same run (driven by bench/diff_large.sh; needs NumPy).

For each size (GiB, default 1): two plain safetensors files of one fp32
tensor, B a copy of A with FLIPS one-ulp flips (the lowest bit of FLIPS
random elements).  Then, cold page cache (the files' pages dropped with
posix_fadvise(DONTNEED) before each run) and warm, best of REPEAT (the
median printed beside it: on a shared machine the spread is wide), the
readers run in turn in an order shuffled each round (seeded):

  bitprobe diff A B             (the streamed engine, default threads)
  bitprobe diff A B --threads 1
  numpy whole:   np.count_nonzero(a != b) on two np.memmap of the data
  numpy chunked: the same over 64 MiB slices (a bounded temporary)
  cmp -l A B     (output to a file: GNU cmp stops at once on /dev/null)

Each run is a child process; wall time from fork to exit, CPU time and
peak RSS from wait4(2) (file pages a process maps count in its RSS).
GB/s is the bytes read (both files) over the wall time; the machine's
memcpy bandwidth (numpy copyto of 256 MiB, one thread, best of 5, before
and after each size; the best) is measured in the same run.  Every count is checked (bitprobe's JSON,
numpy's, cmp's lines) against the flips made.  The targets of issue 14:
bitprobe's wall time at most numpy's (cold and warm), its peak RSS at most 128 MiB
whatever the size.  Exits 1 if a count is wrong or a target is missed.
"""
import argparse
import json
import os
import random
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

HDR_ALIGN = 8
RUSAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rusage.py")
RSS_TARGET_MIB = 128.0


def write_pair(d, gib, flips, seed=20261123):
    """A and B of gib GiB of fp32 data each; returns (a, b, data offset, n)."""
    n = int(gib * (1 << 30)) // 4
    hdr = {"w": {"dtype": "F32", "shape": [n], "data_offsets": [0, 4 * n]}}
    h = json.dumps(hdr).encode()
    h += b" " * (-len(h) % HDR_ALIGN)
    off = 8 + len(h)
    rng = np.random.default_rng(seed)
    idx = np.sort(rng.choice(n, flips, replace=False))
    pa, pb = os.path.join(d, "a-%gGiB.safetensors" % gib), os.path.join(d, "b-%gGiB.safetensors" % gib)
    chunk = 1 << 24
    with open(pa, "wb") as fa, open(pb, "wb") as fb:
        for f in (fa, fb):
            f.write(struct.pack("<Q", len(h)) + h)
        for s in range(0, n, chunk):
            e = min(n, s + chunk)
            x = rng.standard_normal(e - s, dtype=np.float32)
            fa.write(x.tobytes())
            u = x.view(np.uint32).copy()
            u[idx[(idx >= s) & (idx < e)] - s] ^= 1
            fb.write(u.tobytes())
        for f in (fa, fb):
            f.flush()
            os.fsync(f.fileno())
    return pa, pb, off, n


def drop_cache(paths):
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def warm_cache(paths):
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass


def measure(argv, stdout):
    """(wall s, cpu s, peak RSS MiB, exit status) of one child, measured by
    bench/rusage.py: a small process forks it, so that the child's peak RSS
    starts from rusage.py's (about 10 MiB), not from this driver's."""
    r = subprocess.run([sys.executable, RUSAGE, "-l", "m"] + argv, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL)
    # the child's own output went to rusage.py's stdout too: the last line is ours
    lines = r.stdout.decode().splitlines()
    f = dict(kv.split("=") for kv in lines[-1].split(": ", 1)[1].split())
    stdout.write(("\n".join(lines[:-1]) + "\n").encode() if len(lines) > 1 else b"")
    return float(f["wall"]), float(f["cpu"]), float(f["maxrss_mib"]), int(f["rc"])


NUMPY_WHOLE = """
import sys, numpy as np
off, n = int(sys.argv[3]), int(sys.argv[4])
a = np.memmap(sys.argv[1], dtype=np.uint32, mode="r", offset=off, shape=(n,))
b = np.memmap(sys.argv[2], dtype=np.uint32, mode="r", offset=off, shape=(n,))
print(np.count_nonzero(a != b))
"""
NUMPY_CHUNKED = """
import sys, numpy as np
off, n = int(sys.argv[3]), int(sys.argv[4])
a = np.memmap(sys.argv[1], dtype=np.uint32, mode="r", offset=off, shape=(n,))
b = np.memmap(sys.argv[2], dtype=np.uint32, mode="r", offset=off, shape=(n,))
c, step = 0, 1 << 24
for s in range(0, n, step):
    c += int(np.count_nonzero(a[s:s + step] != b[s:s + step]))
print(c)
"""


def memcpy_gbs():
    src = np.ones(1 << 26, dtype=np.float32)  # 256 MiB
    dst = np.empty_like(src)
    np.copyto(dst, src)
    best = min(timed(lambda: np.copyto(dst, src)) for _ in range(5))
    return src.nbytes / best / 1e9


def timed(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bitprobe", default=os.environ.get("BITPROBE", "src/bitprobe"))
    ap.add_argument("--gib", type=float, nargs="+", default=[1.0])
    ap.add_argument("--flips", type=int, default=4000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=None, help="where the files go (default: a temporary directory)")
    args = ap.parse_args()
    work = args.dir or tempfile.mkdtemp(prefix="bitprobe-diff-large-")
    os.makedirs(work, exist_ok=True)
    # a copy: a rebuild during the run must not mix two builds' figures
    bp = os.path.join(work, "bitprobe")
    shutil.copy2(os.path.abspath(args.bitprobe), bp)
    py = sys.executable
    ok = True
    print("threads: bitprobe's default is one per online core: %d here" % os.cpu_count())
    bw = memcpy_gbs()
    print("memcpy: %.2f GB/s copied (numpy copyto of 256 MiB, one thread, best of 5; "
          "each byte copied is read once and written once)" % bw)
    try:
        for gib in args.gib:
            need = 2 * gib * (1 << 30) * 1.02
            free = shutil.disk_usage(work).free
            if free < need:
                print("-- %g GiB pair: SKIP (needs %.1f GiB in %s, %.1f GiB free)"
                      % (gib, need / (1 << 30), work, free / (1 << 30)))
                continue
            t = time.monotonic()
            pa, pb, off, n = write_pair(work, gib, args.flips)
            nbytes = 2 * os.path.getsize(pa)
            print("-- %g GiB pair: %d fp32 elements each, %d one-ulp flips (written in %.1f s)"
                  % (gib, n, args.flips, time.monotonic() - t))
            js = os.path.join(work, "report.json")
            outp = os.path.join(work, "stdout.txt")
            cmds = [
                ("bitprobe diff", [bp, "diff", pa, pb, "--quiet", "--json", js]),
                ("bitprobe diff --threads 1", [bp, "diff", pa, pb, "--quiet", "--threads", "1", "--json", js]),
                ("numpy memmap, whole", [py, "-c", NUMPY_WHOLE, pa, pb, str(off), str(n)]),
                ("numpy memmap, 64 MiB chunks", [py, "-c", NUMPY_CHUNKED, pa, pb, str(off), str(n)]),
                ("cmp -l", ["cmp", "-l", pa, pb]),
            ]
            runs = {}  # (label, cache): [(wall, cpu, rss)]
            shuffle = random.Random(20261124)
            for cache in ("cold", "warm"):
                # interleaved, so that the load of a shared machine falls on all
                # alike, in an order drawn afresh each round (seeded): a fixed
                # order gives each reader the same neighbour every time, and on
                # a VM whose host reclaims freed pages the one that runs after
                # a long run may always find its page cache cheaper to fill
                for _ in range(args.repeat):
                    order = list(cmds)
                    shuffle.shuffle(order)
                    for label, argv in order:
                        if cache == "cold":
                            drop_cache([pa, pb])
                        else:
                            warm_cache([pa, pb])
                        with open(outp, "wb") as out:
                            w, c, rss, rc = measure(argv, stdout=out)
                        if label.startswith("bitprobe"):
                            with open(js) as f:
                                count = json.load(f)["results"][0]["mismatched"]
                        elif label == "cmp -l":
                            with open(outp, "rb") as f:
                                count = sum(1 for _ in f)
                        else:
                            with open(outp) as f:
                                count = int(f.read().split()[0])
                        want_rc = 1 if label.startswith(("bitprobe", "cmp")) else 0
                        if count != args.flips or rc != want_rc:
                            print("FAIL: %s (%s): %d mismatches, exit %d (want %d, exit %d)"
                                  % (label, cache, count, rc, args.flips, want_rc))
                            ok = False
                        runs.setdefault((label, cache), []).append((w, c, rss))
                for label, _ in cmds:
                    r = runs[(label, cache)]
                    w, c, _ = min(r)
                    med = statistics.median(x[0] for x in r)
                    print("%-4s %-28s wall %7.3f s, median %7.3f s (runs %s)  cpu %7.3f s  "
                          "peak RSS %7.1f MiB  %6.2f GB/s"
                          % (cache, label, w, med, " ".join("%.3f" % x[0] for x in r), c,
                             max(x[2] for x in r), nbytes / w / 1e9))
            best = {k: (min(r)[0], max(x[2] for x in r)) for k, r in runs.items()}
            median = {k: statistics.median(x[0] for x in r) for k, r in runs.items()}
            for cache in ("cold", "warm"):
                bpw = best[("bitprobe diff", cache)][0]
                npw = min(best[("numpy memmap, whole", cache)][0],
                          best[("numpy memmap, 64 MiB chunks", cache)][0])
                met = bpw <= npw
                ok = ok and met
                print("target %g GiB %s: wall time at most numpy's (the faster of the two): %s "
                      "(best of %d: %.3f s against %.3f s: %.2fx)"
                      % (gib, cache, "met" if met else "MISSED", args.repeat, bpw, npw, bpw / npw))
                # the medians, for the spread of a shared machine (not a target)
                bpm = median[("bitprobe diff", cache)]
                npm = min(median[("numpy memmap, whole", cache)],
                          median[("numpy memmap, 64 MiB chunks", cache)])
                print("     %g GiB %s medians: %.3f s against %.3f s: %.2fx"
                      % (gib, cache, bpm, npm, bpm / npm))
            rss = max(best[(l, c)][1] for l in ("bitprobe diff", "bitprobe diff --threads 1")
                      for c in ("cold", "warm"))
            met = rss <= RSS_TARGET_MIB
            ok = ok and met
            print("target %g GiB: peak RSS at most %.0f MiB: %s (%.1f MiB)"
                  % (gib, RSS_TARGET_MIB, "met" if met else "MISSED", rss))
            bw = max(bw, memcpy_gbs())
            bpw = best[("bitprobe diff", "warm")][0]
            print("memcpy again: best %.2f GB/s copied" % bw)
            print("%g GiB: bitprobe warm reads %.2f GB/s: %.2fx the memcpy rate (bytes copied a second)"
                  % (gib, nbytes / bpw / 1e9, nbytes / bpw / 1e9 / bw))
            for p in (pa, pb, js, outp):
                if os.path.exists(p):
                    os.remove(p)
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)
        elif os.path.exists(bp):
            os.remove(bp)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
