# Sourced by the bench scripts (HERE: their directory).
#   bench_header TITLE: the "== TITLE" line, the date and the commit
#   bench_python MODULE: sets PY to the first of $PYTHON3, python3 and
#     /usr/bin/python3 that imports MODULE; without one: SKIP line, exit 77
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
