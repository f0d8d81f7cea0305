#!/usr/bin/env python3
"""Runs a command and says what it cost: wall time, CPU time, peak memory.

    rusage.py [-l LABEL] [-o FILE] [-e FILE] COMMAND [ARG...]

The child's standard output goes to FILE with -o (default: inherited), its
standard error to FILE with -e.  On standard output, one line:

    LABEL: wall=1.234 user=1.100 sys=0.050 cpu=1.150 maxrss_mib=221.4 rc=0

wall is the monotonic time from fork to exit, user/sys the child's own CPU
time (all its threads) and maxrss_mib its peak resident set, from wait4(2)
for that child alone.  Linux keeps a process's peak across exec, so the
peak is at least the forking interpreter's (about 14 MiB): a floor that
matters only for tiny commands.  Exits with the child's status.
"""
import os
import subprocess
import sys
import time


def main(argv):
    label, out, err = "run", None, None
    while len(argv) >= 2 and argv[0] in ("-l", "-o", "-e"):
        if argv[0] == "-l":
            label = argv[1]
        elif argv[0] == "-o":
            out = argv[1]
        else:
            err = argv[1]
        argv = argv[2:]
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    fo = open(out, "wb") if out else None
    fe = open(err, "wb") if err else None
    t0 = time.monotonic()
    try:
        p = subprocess.Popen(argv, stdout=fo, stderr=fe)
    except OSError as e:
        print(f"rusage.py: cannot run {argv[0]}: {e}", file=sys.stderr)
        return 127
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    rc = p.returncode if p.returncode >= 0 else 128 - p.returncode
    print(f"{label}: wall={wall:.3f} user={ru.ru_utime:.3f} sys={ru.ru_stime:.3f} "
          f"cpu={ru.ru_utime + ru.ru_stime:.3f} maxrss_mib={ru.ru_maxrss / 1024:.1f} rc={rc}",
          flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
