# The command skeleton: help, version, usage errors.
. "$top_srcdir/tests/cli/lib.sh"

run 0 --help
out_has "usage: bitprobe COMMAND"
# a subcommand ("stack ranks") is listed as its command and its name
for c in $("$BITPROBE" --help | awk '/^Commands:/{f=1;next}
        f&&/^  [a-z]/{print ($2 ~ /^[a-z]/) ? $1 "+" $2 : $1}'); do
    words=$(echo "$c" | tr + ' ')
    run 0 help $words
    out_has "usage: bitprobe $words"
    [ "$c" = help ] && continue
    run 0 $words --help
    out_has "usage: bitprobe $words"
done
# the hidden modes' old spellings: the command's usage
run 0 stack --ranks 2 --help
out_has "usage: bitprobe stack ["
run 0 diff --consensus a b --help
out_has "usage: bitprobe diff "
run 0 --version
out_has "bitprobe 0."
run 2
err_has "usage: bitprobe COMMAND"
run 2 frobnicate
err_has "unknown command 'frobnicate'"
run 2 rnu
err_has "unknown command 'rnu'; did you mean 'run'?"
run 2 help frobnicate
err_has "unknown command 'frobnicate'"
run 2 env --bogus
err_has "unknown option '--bogus'"
err_has "usage: bitprobe env"
# a misspelt long option: the nearest one is offered, in every command
run 2 run --quite
err_has "unknown option '--quite'; did you mean '--quiet'?"
run 2 diff --lable=A=x a b
err_has "unknown option '--lable=A=x'; did you mean '--label'?"
run 2 invariance --presett llm
err_has "unknown option '--presett'; did you mean '--preset'?"
run 2 stack --posiitons 1:2
err_has "did you mean '--positions'?"
run 2 run --zzzzzz
err_has "unknown option '--zzzzzz'"
err_lacks "did you mean"
# a known option without its value (the last word), or with one it takes none of
run 2 diff a b --json
err_has "option '--json' needs a value"
err_lacks "unknown option"
run 2 run --quiet=3
err_has "option '--quiet' takes no value"
run 2 run --dtype
err_has "option '--dtype' needs a value"
run 2 env extra
err_has "unexpected argument 'extra'"
done_ok
