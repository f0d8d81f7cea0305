# stack --ranks without a GPU: option errors, the launchers' variables,
# the unique id's exchange; the ranks themselves run on GPUs
# (tests/gpu/screen_gpu.sh, multigpu.sh).
. "$top_srcdir/tests/cli/lib.sh"
unset RANK WORLD_SIZE LOCAL_RANK OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE SLURM_PROCID \
    SLURM_NTASKS BP_RANKS_CHILD BP_NCCL_ID BP_NCCL_ID_FILE TORCHELASTIC_RUN_ID MASTER_ADDR \
    MASTER_PORT
run 2 stack --ranks 0
err_has "--ranks needs a number of ranks (1-4096), not '0'"
run 2 stack --ranks 2 --algos Ring,Bad
err_has "--algos: 'Bad': unknown algorithm 'Bad'"
run 2 stack --ranks 2 --algos Ring/LL/LL128
err_has "--algos: 'Ring/LL/LL128': two protocols"
run 2 stack --ranks 2 --algos Tree/9ch/bucket=lots
err_has "--algos: 'Tree/9ch/bucket=lots': bucket= needs a size such as 25M, once"
run 2 stack --ranks 2 --algos Pairwise
err_has "--algos: Pairwise is an order of the emulation"
run 2 stack --ranks 2 --algos a,b,c,d,e,f,g,h,i
err_has "--algos: 1 to 8 collective configurations"
run 2 stack --ranks 2 --no-params --no-tp
err_has "leave nothing to run"
run 2 stack --ranks 2 --device cuda
err_has "--ranks: option '--device' does not apply"
run 2 stack --ranks 2 --preset huge
err_has "unknown preset 'huge'"
# the subcommand: W as its argument (or --ranks), the same checks
run 2 stack ranks 0
err_has "bitprobe stack ranks: --ranks needs a number of ranks (1-4096), not '0'"
run 2 stack ranks
err_has "bitprobe stack ranks: needs the number of ranks (W)"
run 2 stack ranks 2 3
err_has "unexpected argument '3'"
run 2 stack ranks 2 --seed 0x10
err_has "--seed takes an unsigned decimal integer, not '0x10'"
run 2 stack ranks 2 --plot p.svg
err_has "bitprobe stack ranks: option '--plot' does not apply (see 'bitprobe stack ranks --help')"
run 0 stack ranks --help
out_has "usage: bitprobe stack ranks W"
# bitprobe's own launch needs GPUs
if "$BITPROBE" env --json 2>/dev/null | grep -q '"devices"'; then
    echo "a GPU is here: the no-GPU launch is not tested"
else
    run 2 stack --ranks 2
    grep -qE "needs CUDA GPUs|built without CUDA" "$TMP/err" || fail "the message does not say why"
fi
# under a launcher: this process is one rank
RANK=0 WORLD_SIZE=3 run 2 stack --ranks 2
err_has "--ranks 2, but the torchrun launcher started 3 ranks"
RANK=2 WORLD_SIZE=2 run 2 stack --ranks 2
err_has "RANK=2 is not below WORLD_SIZE=2"
OMPI_COMM_WORLD_RANK=1 run 2 stack --ranks 2
err_has "OMPI_COMM_WORLD_RANK is set but not OMPI_COMM_WORLD_SIZE"
# (the exchange of the id is built with CUDA only)
if "$BITPROBE" env --json | grep -q '"cuda": true'; then
    RANK=1 WORLD_SIZE=2 run 2 stack --ranks 2
    err_has "set BP_NCCL_ID_FILE to a path every rank sees"
    RANK=1 WORLD_SIZE=2 BP_NCCL_ID_FILE="$TMP/id" BP_NCCL_TIMEOUT=0.3 run 2 stack --ranks 2
    err_has "rank 1: rank 0 did not publish NCCL's unique id in '$TMP/id' within 0 s"
    echo nothex >"$TMP/id"
    RANK=1 WORLD_SIZE=2 BP_NCCL_ID_FILE="$TMP/id" run 2 stack --ranks 2
    err_has "'$TMP/id': an NCCL unique id is 256 hex digits, not 6"
    RANK=0 WORLD_SIZE=1 BP_RANKS_CHILD=1 BP_NCCL_ID=00 run 2 stack --ranks 1
    err_has "rank 0: an NCCL unique id is 256 hex digits, not 2"
fi
done_ok
