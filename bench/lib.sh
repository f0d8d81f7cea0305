# Sourced by the bench scripts (HERE: their directory).
#   bench_header TITLE: the "== TITLE" line, the date and the commit
#   bench_python MODULE: sets PY to the first of $PYTHON3, python3 and
#     /usr/bin/python3 that imports MODULE; without one: SKIP line, exit 77
#   bench_figure NAME VALUE TARGET MET: the line bench/gpu.sh's table takes,
#     "figure: NAME | VALUE | TARGET | met" (MET 1), "... | MISSED" (MET 0)
#     or "... | (no target)" (MET -: a figure shown for what it explains)
bench_header() {
    echo "== $1"
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    sh "$HERE/commit.sh" "$HERE/.."
}
bench_python() {
    PY=
    for p in "${PYTHON3:-}" python3 /usr/bin/python3; do
        [ -n "$p" ] && "$p" -c "import $1" >/dev/null 2>&1 && { PY=$p; return 0; }
    done
    echo "SKIP: no Python with $1"
    exit 77
}
bench_figure() {
    case $4 in 1) m=met ;; -) m="(no target)" ;; *) m=MISSED ;; esac
    echo "figure: $1 | $2 | $3 | $m"
}
