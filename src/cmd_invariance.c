/* bitprobe invariance: does a row get the same bits whatever the batch it
 * is computed in?  A command of its own rather than a section of a probe:
 * a probe is a graph of ops run once per backend and compared with
 * goldens, while an invariance run sweeps configurations (batch sizes,
 * placements, repeats, fresh processes) of one op inside one library,
 * groups the results into a map and arbitrates its boundaries with the
 * oracle; it has no golden, and its verdict is the map's, not a
 * comparison's.
 *
 * Flow: options -> engines (auto: the CUDA engines when a GPU is here) ->
 * one sweep per dtype and engine (inv_sweep.h) -> the oracle's result of
 * the probed rows, once per dtype, when some map has a boundary -> fresh
 * processes (this binary again with --digests, each writing every
 * configuration's digest) -> reports.  Exit 0 invariant within the policy,
 * 1 some configuration breaks it (or differs run to run), 2 trouble:
 * usage, no engine able to run here, a failure. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "cli.h"
#include "envinfo.h"
#include "inv_engine.h"
#include "inv_proc.h"
#include "inv_report.h"
#include "inv_sweep.h"
#include "rep.h"
#include "st.h"

#define MAX_ENGINES 8
#define MAX_DTYPES 4

enum {
    O_OP = 0x300, O_SHAPE, O_DTYPE, O_ENGINE, O_M, O_PLACE, O_ROWS, O_SEED,
    O_REPEAT, O_PROCESSES, O_POLICY, O_NO_ORACLE, O_SVG, O_SAVE_INPUTS, O_GPU,
    O_THREADS, O_VERBOSE, O_DIGESTS
};

typedef struct {
    bp_inv_problem_t prob;       /* op, shape, rows, seed (dtype per run) */
    bp_dtype_t dtypes[MAX_DTYPES];
    bool tf32[MAX_DTYPES];
    int ndtypes;
    char dtype_arg[64];
    char engines[MAX_ENGINES][32];
    int nengines;
    bool auto_engines;
    char m_arg[96];
    int64_t *values;
    size_t nvalues;
    bool place[BP_INV_NPLACES];
    char place_arg[32];
    int repeat, processes;
    bp_policy_t policy;
    char policy_arg[128];
    bool oracle, verbose, digests;
    const char *svg, *save_inputs;
    int gpu, threads;
    bp_rep_targets_t rep;
} opts_t;

static int usage(const char *fmt, const char *arg)
{
    return bp_cli_usage_error("invariance", fmt, arg);
}

static int parse_dtypes(opts_t *o, const char *arg)
{
    char buf[64], *items[8];
    snprintf(buf, sizeof buf, "%s", arg);
    snprintf(o->dtype_arg, sizeof o->dtype_arg, "%s", arg);
    int n = bp_cli_split(buf, items, 8);
    o->ndtypes = 0;
    for (int i = 0; i < n; i++) {
        bp_dtype_t dt;
        bool tf32 = strcmp(items[i], "tf32") == 0;
        if (tf32)
            dt = BP_F32;
        else if (!bp_dtype_parse(items[i], &dt) ||
                 (dt != BP_F32 && dt != BP_BF16 && dt != BP_F16))
            return usage("unknown dtype '%s' (fp32, tf32, bf16, fp16)", items[i]);
        if (o->ndtypes == MAX_DTYPES)
            return usage("--dtype: at most 4 dtypes, not '%s'", arg);
        o->dtypes[o->ndtypes] = dt;
        o->tf32[o->ndtypes++] = tf32;
    }
    return o->ndtypes ? -1 : usage("--dtype needs a dtype, not '%s'", arg);
}

static int parse_engines(opts_t *o, const char *arg)
{
    char buf[256], *items[MAX_ENGINES + 1];
    snprintf(buf, sizeof buf, "%s", arg);
    int n = bp_cli_split(buf, items, MAX_ENGINES + 1);
    o->nengines = 0;
    o->auto_engines = false;
    for (int i = 0; i < n; i++) {
        if (strcmp(items[i], "auto") == 0) {
            o->auto_engines = true;
            continue;
        }
        bool known = false;
        for (const char *const *e = bp_inv_engine_names(); *e && !known; e++)
            known = strcmp(*e, items[i]) == 0;
        if (!known && !bp_inv_engine_is_cuda(items[i]))
            return usage("unknown engine '%s' (cpu, cublas, cublas-pedantic, "
                         "cublaslt, auto)", items[i]);
        if (o->nengines == MAX_ENGINES)
            return usage("--engine: too many engines in '%s'", arg);
        snprintf(o->engines[o->nengines++], sizeof o->engines[0], "%s", items[i]);
    }
    return o->nengines || o->auto_engines ? -1
                                          : usage("--engine needs an engine, not '%s'", arg);
}

static int parse_places(opts_t *o, const char *arg)
{
    char buf[64], *items[8];
    snprintf(buf, sizeof buf, "%s", arg);
    snprintf(o->place_arg, sizeof o->place_arg, "%s", arg);
    int n = bp_cli_split(buf, items, 8);
    memset(o->place, 0, sizeof o->place);
    for (int i = 0; i < n; i++) {
        bp_inv_place_t p;
        if (strcmp(items[i], "all") == 0) {
            for (int k = 0; k < BP_INV_NPLACES; k++)
                o->place[k] = true;
        } else if (bp_inv_place_parse(items[i], &p)) {
            o->place[p] = true;
        } else {
            return usage("unknown placement '%s' (first, middle, last, all)", items[i]);
        }
    }
    return n ? -1 : usage("--place needs a placement, not '%s'", arg);
}

static bool parse_shape(const char *s, int64_t *k, int64_t *n)
{
    char *end;
    errno = 0;
    long long a = strtoll(s, &end, 10);
    if (errno || end == s || (*end != 'x' && *end != 'X') || a < 1 || a > (1 << 24))
        return false;
    const char *p = end + 1;
    long long b = strtoll(p, &end, 10);
    if (errno || end == p || *end || b < 1 || b > (1 << 24))
        return false;
    *k = a;
    *n = b;
    return true;
}

static bool parse_long(const char *s, long lo, long hi, long *out)
{
    size_t v;
    if (!bp_cli_count(s, hi, &v) || (long)v < lo)
        return false;
    *out = (long)v;
    return true;
}

static int parse(int argc, char **argv, opts_t *o)
{
    static const struct option longopts[] = {
        {"op", required_argument, 0, O_OP},
        {"shape", required_argument, 0, O_SHAPE},
        {"dtype", required_argument, 0, O_DTYPE},
        {"engine", required_argument, 0, O_ENGINE},
        {"m", required_argument, 0, O_M},
        {"place", required_argument, 0, O_PLACE},
        {"rows", required_argument, 0, O_ROWS},
        {"seed", required_argument, 0, O_SEED},
        {"repeat", required_argument, 0, O_REPEAT},
        {"processes", required_argument, 0, O_PROCESSES},
        {"policy", required_argument, 0, O_POLICY},
        {"no-oracle", no_argument, 0, O_NO_ORACLE},
        {"svg", required_argument, 0, O_SVG},
        {"save-inputs", required_argument, 0, O_SAVE_INPUTS},
        {"gpu", required_argument, 0, O_GPU},
        {"threads", required_argument, 0, O_THREADS},
        {"verbose", no_argument, 0, O_VERBOSE},
        {"digests", no_argument, 0, O_DIGESTS},
        BP_REP_LONG_OPTIONS,
        {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    o->prob.op = BP_INV_MATMUL;
    o->prob.k = o->prob.n = 4096;
    o->prob.rows = 1;
    o->repeat = 1;
    o->oracle = true;
    o->auto_engines = true;
    bp_policy_exact(&o->policy);
    snprintf(o->policy_arg, sizeof o->policy_arg, "exact");
    snprintf(o->m_arg, sizeof o->m_arg, "1:1024");
    parse_dtypes(o, "bf16");
    parse_places(o, "first");
    bp_rep_targets_init(&o->rep);
    int c, rc;
    long v;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "qv", longopts, NULL)) != -1) {
        if (bp_rep_targets_option(&o->rep, c, optarg))
            continue;
        switch (c) {
        case O_OP:
            if (strcmp(optarg, "matmul") != 0)
                return usage("unknown --op '%s' (matmul)", optarg);
            break;
        case O_SHAPE:
            if (!parse_shape(optarg, &o->prob.k, &o->prob.n))
                return usage("--shape takes KxN (the reduction dimension, then the "
                             "columns; each 1 to 16777216), not '%s'", optarg);
            break;
        case O_DTYPE:
            if ((rc = parse_dtypes(o, optarg)) >= 0)
                return rc;
            break;
        case O_ENGINE:
            if ((rc = parse_engines(o, optarg)) >= 0)
                return rc;
            break;
        case O_M:
            snprintf(o->m_arg, sizeof o->m_arg, "%s", optarg);
            break;
        case O_PLACE:
            if ((rc = parse_places(o, optarg)) >= 0)
                return rc;
            break;
        case O_ROWS:
            if (!parse_long(optarg, 1, 1 << 20, &v))
                return usage("--rows takes a count from 1, not '%s'", optarg);
            o->prob.rows = v;
            break;
        case O_SEED: {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(optarg, &end, 10);
            if (errno || !*optarg || *end || *optarg == '-')
                return usage("--seed takes an unsigned integer, not '%s'", optarg);
            o->prob.seed = s;
            break;
        }
        case O_REPEAT:
            if (!parse_long(optarg, 1, 1000, &v))
                return usage("--repeat takes 1 to 1000, not '%s'", optarg);
            o->repeat = (int)v;
            break;
        case O_PROCESSES:
            if (!parse_long(optarg, 0, 100, &v))
                return usage("--processes takes 0 to 100, not '%s'", optarg);
            o->processes = (int)v;
            break;
        case O_POLICY: {
            bp_error_t err = {0};
            if (bp_policy_parse(optarg, &o->policy, &err))
                return bp_cli_usage_error("invariance", "--policy: %s", err.msg);
            snprintf(o->policy_arg, sizeof o->policy_arg, "%s", optarg);
            break;
        }
        case O_NO_ORACLE: o->oracle = false; break;
        case O_SVG: o->svg = optarg; break;
        case O_SAVE_INPUTS: o->save_inputs = optarg; break;
        case O_GPU:
            if (!parse_long(optarg, 0, 1024, &v))
                return usage("--gpu needs a device index, not '%s'", optarg);
            o->gpu = (int)v;
            break;
        case O_THREADS:
            if (!parse_long(optarg, 0, 4096, &v))
                return usage("--threads needs a count, not '%s'", optarg);
            o->threads = (int)v;
            break;
        case 'v':
        case O_VERBOSE: o->verbose = true; break;
        case O_DIGESTS: o->digests = true; break;
        case ':':
            return usage("option '%s' needs a value", argv[optind - 1]);
        default:
            return usage("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return usage("unexpected argument '%s'", argv[optind]);
    if ((rc = bp_rep_targets_check("invariance", &o->rep)) >= 0)
        return rc;
    bp_error_t err = {0};
    if (bp_inv_values_parse(o->m_arg, 1 << 20, &o->values, &o->nvalues, &err))
        return bp_cli_usage_error("invariance", "--m: %s", err.msg);
    o->prob.mmax = o->values[o->nvalues - 1];
    if (o->prob.mmax < o->prob.rows)
        return bp_cli_usage_error("invariance", "--m: every batch (up to %" PRId64
                                  ") is smaller than the %" PRId64 " probed rows",
                                  o->prob.mmax, o->prob.rows);
    return -1;
}

/* Opens every engine asked for; auto adds the CUDA engines that open and
 * notes why the others do not.  Returns the exit status to stop with, or
 * -1 to go on. */
static int open_engines(opts_t *o, bp_inv_engine_t **eng, int *n, bp_inv_study_t *st)
{
    *n = 0;
    char names[MAX_ENGINES * 2][32];
    bool named[MAX_ENGINES * 2];
    int k = 0;
    for (int i = 0; i < o->nengines; i++) {
        snprintf(names[k], sizeof names[k], "%s", o->engines[i]);
        named[k++] = true;
    }
    if (o->auto_engines) {
        static const char *const gpu[] = {"cublas", "cublas-pedantic", "cublaslt"};
        for (int i = 0; i < 3; i++) {
            bool dup = false;
            for (int j = 0; j < k && !dup; j++)
                dup = strcmp(names[j], gpu[i]) == 0;
            if (!dup) {
                snprintf(names[k], sizeof names[k], "%s", gpu[i]);
                named[k++] = false;
            }
        }
    }
    char why[1024] = "";
    for (int i = 0; i < k; i++) {
        bool dup = false;
        for (int j = 0; j < i && !dup; j++)
            dup = strcmp(names[j], names[i]) == 0;
        if (dup)
            continue;
        bp_error_t err = {0};
        bp_inv_engine_t *e = NULL;
        if (bp_inv_engine_open(names[i], o->gpu, &e, &err)) {
            if (named[i] || err.code != BP_EUNAVAIL) {
                for (int j = 0; j < *n; j++)
                    bp_inv_engine_close(eng[j]);
                *n = 0;
                bp_error_prefix(&err, "engine %s: ", names[i]);
                return bp_cli_fail(&err);
            }
            if (!why[0])
                snprintf(why, sizeof why, "%s", err.msg);
            bp_inv_study_note(st, "%s skipped: %s", names[i], err.msg);
            continue;
        }
        eng[(*n)++] = e;
    }
    if (!*n) {
        fprintf(stderr, "bitprobe invariance: no engine can run here (%s); the "
                "CPU engine is named explicitly, on a shape it can sweep: e.g. "
                "--engine cpu --shape 256x256 --m 1:64\n",
                why[0] ? why : "none asked for");
        return BP_EXIT_TROUBLE;
    }
    return -1;
}

static void progress(void *ctx, const bp_inv_map_t *m, int64_t v)
{
    const opts_t *o = ctx;
    bp_cli_progress("\r%s %s %s %" PRId64 " of %" PRId64 "   ", m->engine,
                    m->dtype_name, bp_inv_axis_letter(m->axis), v, o->prob.mmax);
}

/* Every dtype on every engine; a combination an engine cannot run (TF32
 * on the CPU) is a note. */
static int sweep_all(opts_t *o, bp_inv_engine_t **eng, int n, bp_inv_study_t *st)
{
    bp_inv_sweep_opts_t so = {.values = o->values, .nvalues = o->nvalues,
                              .repeat = o->repeat, .policy = o->policy,
                              .progress = o->digests ? NULL : progress, .ctx = o};
    memcpy(so.place, o->place, sizeof so.place);
    for (int d = 0; d < o->ndtypes; d++)
        for (int i = 0; i < n; i++) {
            bp_inv_problem_t p = o->prob;
            p.dtype = o->dtypes[d];
            p.tf32 = o->tf32[d];
            bp_inv_map_t m;
            bp_error_t err = {0};
            bp_status s = bp_inv_sweep(eng[i], &p, &so, &m, &err);
            bp_cli_progress("\r%60s\r", "");
            if (s == BP_EUNAVAIL) {
                bp_inv_study_note(st, "%s %s skipped: %s", eng[i]->name,
                                  bp_inv_dtype_name(&p), err.msg);
                continue;
            }
            if (s || bp_inv_study_add(st, &m, &err))
                return bp_cli_fail(&err);
        }
    if (!st->nmaps) {
        fprintf(stderr, "bitprobe invariance: nothing swept: no engine runs these "
                        "dtypes\n");
        size_t i;
        json_t *note;
        json_array_foreach(st->notes, i, note)
            fprintf(stderr, "  %s\n", json_string_value(note));
        return BP_EXIT_TROUBLE;
    }
    return -1;
}

/* The oracle's result once per dtype, for the maps of that dtype that hold
 * more than one result group (or all of them with -v). */
static int arbitrate(opts_t *o, bp_inv_study_t *st)
{
    for (int d = 0; d < o->ndtypes; d++) {
        bp_inv_problem_t p = o->prob;
        p.dtype = o->dtypes[d];
        p.tf32 = o->tf32[d];
        bool need = false;
        for (size_t i = 0; i < st->nmaps; i++)
            if (strcmp(st->maps[i].dtype_name, bp_inv_dtype_name(&p)) == 0)
                need |= st->maps[i].ng > 1 || o->verbose;
        if (!need)
            continue;
        size_t nb = bp_inv_result_elems(&p) * bp_dtype_info(p.dtype)->size;
        void *exact = malloc(nb);
        bp_error_t err = {0};
        if (!exact)
            return bp_cli_fail(&(bp_error_t){BP_ENOMEM, "out of memory"});
        bp_cli_progress("\roracle %s ...", bp_inv_dtype_name(&p));
        bp_status s = bp_inv_oracle(&p, o->threads, exact, &err);
        bp_cli_progress("\r%40s\r", "");
        for (size_t i = 0; !s && i < st->nmaps; i++)
            if (strcmp(st->maps[i].dtype_name, bp_inv_dtype_name(&p)) == 0)
                s = bp_inv_map_arbitrate(&st->maps[i], exact, &err);
        free(exact);
        if (s)
            return bp_cli_fail(&err);
    }
    return -1;
}

/* --save-inputs: the inputs of placement first as one safetensors file:
 * a [M, K] (rows [0, R) the probed rows, then fillers) and b [K, N] per
 * dtype ("a.bf16", "b.bf16"), for the same experiment elsewhere. */
static int save_inputs(const opts_t *o)
{
    bp_st_file_t f;
    bp_st_init(&f);
    bp_error_t err = {0};
    bp_status s = BP_OK;
    for (int d = 0; d < o->ndtypes && !s; d++) {
        bp_dtype_t dt = o->dtypes[d];
        char an[32], bn[32];
        snprintf(an, sizeof an, "a.%s", o->tf32[d] ? "tf32" : bp_dtype_name(dt));
        snprintf(bn, sizeof bn, "b.%s", o->tf32[d] ? "tf32" : bp_dtype_name(dt));
        bp_buf_t a = {0}, b = {0};
        int64_t sa[2] = {o->prob.mmax, o->prob.k}, sb[2] = {o->prob.k, o->prob.n};
        if (!(s = bp_buf_alloc(&a, dt, 2, sa, &err)) &&
            !(s = bp_buf_alloc(&b, dt, 2, sb, &err))) {
            size_t row = (size_t)o->prob.k * bp_dtype_info(dt)->size;
            bp_inv_fill(dt, a.data, 0, o->prob.mmax, o->prob.k, o->prob.seed,
                        BP_INV_STREAM_FILL);
            bp_inv_fill(dt, a.data, 0, o->prob.rows, o->prob.k, o->prob.seed,
                        BP_INV_STREAM_PROBE);
            (void)row;
            bp_inv_fill(dt, b.data, 0, o->prob.k, o->prob.n, o->prob.seed,
                        BP_INV_STREAM_B);
            if (!(s = bp_st_add(&f, an, &a, &err)))
                s = bp_st_add(&f, bn, &b, &err);
        }
        bp_buf_free(&a);
        bp_buf_free(&b);
    }
    char rows[32];
    snprintf(rows, sizeof rows, "%" PRId64, o->prob.rows);
    if (!s && !(s = bp_st_set_meta(&f, "probed_rows", rows, &err)))
        s = bp_st_write(o->save_inputs, &f, false, &err);
    bp_st_free(&f);
    return s ? bp_cli_fail(&err) : -1;
}

/* The study the Markdown writer appends as text (bp_rep_write's writers
 * take the report alone). */
static const bp_inv_study_t *md_study;

static int inv_markdown(FILE *f, const bp_report_t *rep)
{
    int rc = bp_rep_markdown(f, rep);
    if (rc)
        return rc;
    fputs("\n## Invariance map\n\n```text\n", f);
    bp_inv_text_opts_t to = {.quiet = false, .verbose = false};
    rc = bp_inv_text(f, md_study, &to);
    fputs("```\n", f);
    return rc || ferror(f) ? BP_EXIT_TROUBLE : BP_EXIT_OK;
}

static int write_svg(const char *path, const bp_inv_study_t *st)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!f) {
        fprintf(stderr, "bitprobe invariance: cannot write '%s': %s\n", path,
                strerror(errno));
        return BP_EXIT_TROUBLE;
    }
    int rc = bp_inv_svg(f, st);
    if (f != stdout && fclose(f) != 0)
        rc = BP_EXIT_TROUBLE;
    if (rc)
        fprintf(stderr, "bitprobe invariance: cannot write '%s'\n", path);
    return rc;
}

static int reports(const opts_t *o, const bp_inv_study_t *st, int argc, char **argv)
{
    const bp_rep_targets_t *t = &o->rep;
    bool taken = (t->json && !strcmp(t->json, "-")) || (t->junit && !strcmp(t->junit, "-")) ||
                 (t->markdown && !strcmp(t->markdown, "-")) || (o->svg && !strcmp(o->svg, "-"));
    int rc = 0;
    if (!taken) {
        bp_inv_text_opts_t to = {.quiet = bp_cli_quiet, .verbose = o->verbose};
        rc = bp_inv_text(stdout, st, &to);
    }
    if (!rc && (t->json || t->junit || t->markdown || t->github)) {
        bp_report_t rep;
        bp_report_init(&rep, argc, argv);
        bool cuda = false;
        for (size_t i = 0; i < st->nmaps; i++)
            cuda |= bp_inv_engine_is_cuda(st->maps[i].engine);
        rep.env = cuda ? bp_envinfo_collect() : bp_envinfo_host();
        json_t *inv = bp_inv_json(st);
        rep.extra = json_object();
        if (!inv || !rep.extra || json_object_set_new(rep.extra, "invariance", inv) ||
            !bp_inv_fill_report(&rep, st)) {
            fprintf(stderr, "bitprobe invariance: out of memory building the report\n");
            rc = BP_EXIT_TROUBLE;
        }
        if (!rc && t->json)
            rc = bp_rep_write(t->json, bp_rep_json, &rep);
        if (!rc && t->junit)
            rc = bp_rep_write(t->junit, bp_rep_junit, &rep);
        if (!rc && t->markdown) {
            md_study = st;
            rc = bp_rep_write(t->markdown, inv_markdown, &rep);
        }
        if (!rc && t->github) {
            fflush(stdout);
            rc = bp_rep_github(taken ? stderr : stdout, &rep);
        }
        bp_report_free(&rep);
    }
    if (!rc && o->svg)
        rc = write_svg(o->svg, st);
    return rc;
}

int cmd_invariance(int argc, char **argv)
{
    opts_t o;
    int rc = parse(argc, argv, &o);
    if (rc >= 0) {
        free(o.values);
        return rc;
    }
    bp_inv_study_t st;
    bp_inv_study_init(&st);
    st.seed = o.prob.seed;
    st.repeat = o.repeat;
    st.processes = o.processes;
    st.policy = o.policy;
    snprintf(st.values, sizeof st.values, "%s", o.m_arg);
    bp_inv_engine_t *eng[MAX_ENGINES * 2];
    int neng = 0;
    if (o.save_inputs && (rc = save_inputs(&o)) >= 0)
        goto out;
    if ((rc = open_engines(&o, eng, &neng, &st)) >= 0)
        goto out;
    rc = sweep_all(&o, eng, neng, &st);
    if (rc < 0 && o.digests) {
        rc = bp_inv_proc_write_digests(stdout, &st) ? BP_EXIT_TROUBLE : BP_EXIT_OK;
        goto out;
    }
    if (rc < 0 && o.processes) {
        /* the children sweep what this process swept, nothing else */
        char engines[MAX_ENGINES * 40] = "";
        size_t w = 0;
        for (int i = 0; i < neng; i++)
            w += (size_t)snprintf(engines + w, sizeof engines - w, "%s%s",
                                  i ? "," : "", eng[i]->name);
        char *args[64];
        int na = 0;
        char shape[64], rows[32], seed[32], gpu[16];
        snprintf(shape, sizeof shape, "%" PRId64 "x%" PRId64, o.prob.k, o.prob.n);
        snprintf(rows, sizeof rows, "%" PRId64, o.prob.rows);
        snprintf(seed, sizeof seed, "%" PRIu64, o.prob.seed);
        snprintf(gpu, sizeof gpu, "%d", o.gpu);
        char *fixed[] = {"invariance", "--op", (char *)bp_inv_op_name(o.prob.op),
                         "--shape", shape, "--dtype", o.dtype_arg, "--engine", engines,
                         "--m", o.m_arg, "--place", o.place_arg, "--rows", rows,
                         "--seed", seed, "--gpu", gpu, "--policy", o.policy_arg,
                         "--digests", NULL};
        for (char **a = fixed; *a; a++)
            args[na++] = *a;
        args[na] = NULL;
        bp_error_t err = {0};
        for (int p = 0; p < o.processes; p++) {
            bp_cli_progress("\rfresh process %d of %d   ", p + 1, o.processes);
            if (bp_inv_proc_compare(args, &st, &err)) {
                bp_cli_progress("\r%40s\r", "");
                rc = bp_cli_fail(&err);
                goto out;
            }
        }
        bp_cli_progress("\r%40s\r", "");
    }
    if (rc < 0 && o.oracle)
        rc = arbitrate(&o, &st);
    if (rc < 0) {
        rc = reports(&o, &st, argc, argv);
        if (!rc)
            rc = bp_inv_study_failures(&st) ? BP_EXIT_DRIFT : BP_EXIT_OK;
    }
out:
    for (int i = 0; i < neng; i++)
        bp_inv_engine_close(eng[i]);
    bp_inv_study_free(&st);
    free(o.values);
    bp_backend_thread_done();
    return rc;
}
