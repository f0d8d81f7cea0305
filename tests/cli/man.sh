# The man page: lints clean, and documents every command's usage line.
. "$top_srcdir/tests/cli/lib.sh"
man="$top_srcdir/man/bitprobe.1"
[ -n "${MANDOC:-}" ] || { echo "mandoc not installed: SKIP"; exit 77; }
"$MANDOC" -T lint -W warning "$man" >"$TMP/lint" 2>&1 || {
    cat "$TMP/lint"; fail "mandoc -T lint reports problems"; }
"$MANDOC" -T ascii "$man" | sed 's/.\x08//g' | tr -s ' \t\n' '   ' >"$TMP/man.txt"
for c in $("$BITPROBE" --help | awk '/^Commands:/{f=1;next}
        f&&/^  [a-z]/{print ($2 ~ /^[a-z]/) ? $1 "+" $2 : $1}'); do
    ntests=$((ntests + 1))
    line=$("$BITPROBE" help $(echo "$c" | tr + ' ') | sed -n 's/^usage: //p' | tr -s ' ')
    grep -qF -- "$line" "$TMP/man.txt" || fail "man page lacks usage line: $line"
done
done_ok
