/* bitprobe explain A.ledger B.ledger [--op ID]: the op that introduced the
 * difference between two recorded runs (ledger_diff.h), turned into a
 * probe with its captured inputs (ledger_map.h): written out, ready for a
 * bug ticket, and run on the oracle (and on bitprobe's cpu and cuda
 * backends where they are here) to say which side is correctly rounded
 * and which formulation reproduces each side's bits.
 *
 * Exit status: 0 the two sides' results of the op agree, 1 they differ,
 * 2 trouble (bad ledgers, an op without a bitprobe counterpart, inputs
 * not captured). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend.h"
#include "cli.h"
#include "esc.h"
#include "explain.h"
#include "ledger_diff.h"
#include "ledger_map.h"
#include "rep_explain.h"
#include "cmd_ledger.h"
#include "rep_ledger.h"

typedef struct {
    const bp_ledger_t *L[2];
    bp_st_file_t caps[2];
    bool has_caps[2];
} caps_t;

/* Any captured tensor of either ledger with t's hash, dtype and shape. */
static const bp_st_tensor_t *find_capture(const caps_t *c, const bp_ledger_tensor_t *t)
{
    if (!t->has_hash)
        return NULL;
    for (int s = 0; s < 2; s++) {
        if (!c->has_caps[s])
            continue;
        const bp_ledger_t *L = c->L[s];
        for (size_t i = 0; i < L->n; i++)
            for (uint32_t k = 0; k < L->ops[i].nin + L->ops[i].nout; k++) {
                const bp_ledger_tensor_t *u = k < L->ops[i].nin ? &L->ops[i].in[k]
                                                                : &L->ops[i].out[k - L->ops[i].nin];
                if (!u->capture || u->hash != t->hash || strcmp(u->dtype, t->dtype) ||
                    !bp_shape_equal(u->ndim, u->shape, t->ndim, t->shape))
                    continue;
                const bp_st_tensor_t *st = bp_st_find(&c->caps[s], u->capture);
                if (st)
                    return st;
            }
    }
    return NULL;
}

/* --op: "b23", "b:23", "a23", "a:23", or "23" (B's). */
static bool parse_op_id(const char *s, int *side, long *seq)
{
    *side = 1;
    if (*s == 'a' || *s == 'A' || *s == 'b' || *s == 'B') {
        *side = *s == 'b' || *s == 'B';
        s++;
        if (*s == ':' || *s == '#')
            s++;
    }
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < 0)
        return false;
    *seq = v;
    return true;
}

/* The recorded output of side s (its values when captured). */
typedef struct {
    const bp_ledger_tensor_t *t; /* NULL: the side has no such op */
    const bp_st_tensor_t *val;
} rec_t;

static bool buf_matches(const bp_buf_t *b, const bp_ledger_tensor_t *t)
{
    return strcmp(bp_dtype_info(b->dtype)->st_name, t->dtype) == 0 &&
           bp_shape_equal(b->ndim, b->shape, t->ndim, t->shape);
}

/* How a computed output stands against a side's record: by hash. */
static bool reproduces(const bp_buf_t *b, const rec_t *r)
{
    return r->t && r->t->has_hash && buf_matches(b, r->t) &&
           bp_ledger_hash(b->data, bp_buf_nbytes(b)) == r->t->hash;
}

/* Elements of rec that are the oracle's bits, and the most ulps off. */
static void against_oracle(const bp_buf_t *orc, const bp_st_tensor_t *rec, size_t *exact,
                           uint64_t *max_ulp)
{
    *exact = 0;
    *max_ulp = 0;
    for (size_t i = 0; i < orc->numel; i++) {
        uint64_t o = bp_buf_bits(orc, i), x = bp_buf_bits(&rec->buf, i);
        uint64_t u = bp_ulp_distance(orc->dtype, o, x);
        *exact += bp_dtype_bits_equal(orc->dtype, o, x, false);
        if (u > *max_ulp)
            *max_ulp = u;
    }
}

static int write_files(const char *dir, const bp_ledger_map_t *m, const bp_ledger_op_t *op,
                       const caps_t *c, const rec_t rec[2], char *ypath, size_t n)
{
    char tpath[PATH_MAX];
    bp_error_t err = {0};
    if (snprintf(ypath, n, "%s/%s.yaml", dir, m->name) >= (int)n ||
        snprintf(tpath, sizeof tpath, "%s/%s.safetensors", dir, m->name) >= (int)sizeof tpath) {
        bp_esc_printf(stderr, "bitprobe explain: path too long under '%s'\n", dir);
        return BP_EXIT_TROUBLE;
    }
    bp_st_file_t f;
    bp_st_init(&f);
    bp_status st = BP_OK;
    for (uint32_t k = 0; !st && k < op->nin; k++) {
        const bp_st_tensor_t *t = find_capture(c, &op->in[k]);
        char name[32];
        snprintf(name, sizeof name, "x%u", k);
        if (!t) {
            char sh[128];
            bp_shape_format(op->in[k].ndim < BP_MAXDIM ? op->in[k].ndim : BP_MAXDIM,
                            op->in[k].shape, sh, sizeof sh);
            bp_esc_printf(stderr,
                          "bitprobe explain: input %u of %s (%s %s, hash %016" PRIx64 ") was "
                          "not captured in either ledger: record again with --capture '%s' "
                          "or --reference OTHER.ledger\n",
                          k, op->op, op->in[k].dtype, sh, op->in[k].hash, op->op);
            bp_st_free(&f);
            return BP_EXIT_TROUBLE;
        }
        st = bp_st_add(&f, name, &t->buf, &err);
    }
    for (int s = 0; !st && s < 2; s++)
        if (rec[s].val)
            st = bp_st_add(&f, s ? "recorded.b.y" : "recorded.a.y", &rec[s].val->buf, &err);
    if (!st)
        st = bp_st_set_meta(&f, "written_by", "bitprobe explain (op ledgers)", &err);
    if (!st)
        st = bp_st_write(tpath, &f, false, &err);
    bp_st_free(&f);
    if (st)
        return bp_cli_fail(&err);
    FILE *y = fopen(ypath, "w");
    if (!y || fputs(m->yaml, y) == EOF || fclose(y) != 0) {
        bp_esc_printf(stderr, "bitprobe explain: cannot write '%s': %s\n", ypath,
                      strerror(errno));
        return BP_EXIT_TROUBLE;
    }
    char ins[32] = "no inputs";
    if (op->nin == 1)
        snprintf(ins, sizeof ins, "input x0");
    else if (op->nin > 1)
        snprintf(ins, sizeof ins, "inputs x0..x%u", op->nin - 1);
    bp_esc_printf(stdout, "probe: %s (%s%s in %s)\n", ypath, ins,
           rec[0].val || rec[1].val ? " and the recorded outputs" : "", tpath);
    return BP_EXIT_OK;
}

static void side_line(const char *tag, const rec_t *r, const bp_buf_t *orc, json_t *js)
{
    char sh[128];
    if (!r->t) {
        bp_esc_printf(stdout, "  %s: has no such op: it used the input as it was\n", tag);
        return;
    }
    bp_shape_format(r->t->ndim < BP_MAXDIM ? r->t->ndim : BP_MAXDIM, r->t->shape, sh, sizeof sh);
    bp_esc_printf(stdout, "  %s: %s %s %016" PRIx64 ": ", tag, r->t->dtype, sh, r->t->hash);
    json_t *o = json_pack("{s:s, s:s}", "dtype", r->t->dtype, "hash", "");
    char hx[17];
    snprintf(hx, sizeof hx, "%016" PRIx64, r->t->hash);
    json_object_set_new(o, "hash", json_string(hx));
    if (orc && reproduces(orc, r)) {
        printf("correctly rounded: the oracle's bits, every element\n");
        json_object_set_new(o, "correctly_rounded", json_true());
    } else if (orc && r->val && r->val->buf.numel == orc->numel &&
               r->val->buf.dtype == orc->dtype) {
        size_t exact;
        uint64_t mu;
        against_oracle(orc, r->val, &exact, &mu);
        printf("%zu of %zu element%s correctly rounded, at most %" PRIu64 " ulp from the "
               "oracle\n", exact, orc->numel, orc->numel == 1 ? "" : "s", mu);
        json_object_set_new(o, "correctly_rounded", json_false());
        json_object_set_new(o, "exact_elements", json_integer((json_int_t)exact));
        json_object_set_new(o, "max_ulp", json_integer((json_int_t)mu));
    } else if (orc) {
        printf("not the oracle's bits (not captured: record with --capture for per-element "
               "detail)\n");
        json_object_set_new(o, "correctly_rounded", json_false());
    } else {
        printf("(no oracle verdict)\n");
    }
    json_object_set_new(js, tag, o);
}

/* What a cast did to its input: how many elements it changed, and by how
 * much at most (zero.Init's positions: the bf16 rounding itself). */
static void cast_change(const bp_probe_t *p, const bp_buf_t *bufs, json_t *js)
{
    if (p->nops < 2 || p->ops[p->nops - 1].kind != BP_OP_CAST)
        return;
    const bp_buf_t *in = &bufs[0], *out = &bufs[p->nops - 1];
    if (in->numel != out->numel)
        return;
    size_t n = 0, at = 0;
    double mx = 0;
    for (size_t i = 0; i < in->numel; i++) {
        double a = bp_buf_get(in, i), b = bp_buf_get(out, i);
        if (a != b && !(isnan(a) && isnan(b))) {
            n++;
            if (fabs(a - b) > mx)
                mx = fabs(a - b), at = i;
        }
    }
    bp_esc_printf(stdout, "  the cast %s->%s changes %zu of %zu element%s", bp_dtype_name(in->dtype),
           bp_dtype_name(out->dtype), n, in->numel, in->numel == 1 ? "" : "s");
    if (n)
        printf(", at most by %g (element %zu: %.17g -> %.17g)", mx, at, bp_buf_get(in, at),
               bp_buf_get(out, at));
    printf("\n");
    json_object_set_new(js, "cast_changes", json_pack("{s:I, s:I, s:f}", "elements",
                                                       (json_int_t)n, "of",
                                                       (json_int_t)in->numel, "max_abs", mx));
}

/* Which backend reproduced which side (for the conclusion). */
typedef struct {
    char a[64], b[64]; /* backend names, comma-separated */
    bool oracle_a, oracle_b;
} repro_t;

/* One line a person (or a script) can act on. */
static void conclude(const rec_t rec[2], const repro_t *rp, json_t *js)
{
    char v[160];
    if (!rec[0].t || !rec[1].t)
        snprintf(v, sizeof v, "%s's op is %scorrectly rounded", rec[0].t ? "A" : "B",
                 (rec[0].t ? rp->oracle_a : rp->oracle_b) ? "" : "not ");
    else if (rp->oracle_a && rp->oracle_b)
        snprintf(v, sizeof v, "both sides are correctly rounded");
    else if (rp->oracle_a || rp->oracle_b)
        snprintf(v, sizeof v, "%s is correctly rounded, %s is not", rp->oracle_a ? "A" : "B",
                 rp->oracle_a ? "B" : "A");
    else
        snprintf(v, sizeof v, "neither side is correctly rounded");
    putchar('\n');
    bp_esc_printf(stdout, "verdict: %s", v);
    if (*rp->a || *rp->b) {
        bp_esc_printf(stdout, "; reproduced by bitprobe's formulations:%s%s%s%s%s%s", *rp->a ? " A by " : "",
               rp->a, *rp->a && *rp->b ? "," : "", *rp->b ? " B by " : "", rp->b,
               *rp->a && *rp->b && strcmp(rp->a, rp->b) ? " (the two formulations explain "
                                                          "the divergence)" : "");
    }
    printf("\n");
    json_object_set_new(js, "conclusion", json_pack("{s:s, s:s, s:s}", "verdict", v,
                                                    "reproduce_a", rp->a, "reproduce_b",
                                                    rp->b));
}

typedef struct {
    const char *op_id, *out_dir, *json;
    bp_cli_devices_t dev;
    size_t first;
} eopts_t;

static void add_name(char *list, size_t n, const char *name)
{
    size_t l = strlen(list);
    snprintf(list + l, n - l, "%s%s", l ? ", " : "", name);
}

static int run_backends(const eopts_t *o, const bp_probe_t *p, const rec_t rec[2],
                        bp_buf_t **orc_out, json_t *js, repro_t *rp)
{
    bp_backend_t *bes[BP_CLI_MAX_BACKENDS];
    bp_cli_skip_t skipped[BP_CLI_MAX_BACKENDS];
    int nb = 0, nsk = 0;
    int rc = bp_cli_open_backends("explain", &o->dev, bes, &nb, skipped, &nsk, NULL);
    if (rc)
        return rc;
    bp_error_t err = {0};
    bool have_oracle = false;
    for (int i = 0; i < nb; i++)
        have_oracle |= strcmp(bes[i]->name, "oracle") == 0;
    if (!have_oracle && nb < BP_CLI_MAX_BACKENDS) {
        if (bp_backend_open("oracle", &o->dev.be, &bes[nb], &err) == BP_OK)
            nb++;
        else
            bp_esc_printf(stdout, "  no oracle: %s\n", err.msg);
    }
    bp_dtype_t dt = BP_F32;
    for (int d = BP_F32; d < BP_NDTYPES; d++)
        if (p->dtypes & (1u << d)) {
            dt = (bp_dtype_t)d;
            break;
        }
    json_t *jb = json_object();
    printf("the probe on bitprobe's backends, against each side's recorded bits:\n");
    for (int i = 0; i < nb && !rc; i++) {
        bp_buf_t *bufs = calloc(p->nops, sizeof *bufs);
        if (!bufs || bp_backend_run(bes[i], p, dt, bufs, &err)) {
            bp_esc_printf(stdout, "  %-7s failed: %s\n", bes[i]->name, bufs ? err.msg : "out of memory");
            json_object_set_new(jb, bes[i]->name, json_pack("{s:s}", "error", err.msg));
            bp_backend_bufs_free(bufs, bufs ? p->nops : 0);
            free(bufs);
            continue;
        }
        const bp_buf_t *y = &bufs[p->nops - 1];
        bool ra = reproduces(y, &rec[0]), rb = reproduces(y, &rec[1]);
        bp_esc_printf(stdout, "  %-7s %s\n", bes[i]->name,
               ra && rb ? "reproduces both (A and B agree)"
               : ra     ? "reproduces A's bits"
               : rb     ? "reproduces B's bits"
                        : "reproduces neither side");
        json_object_set_new(jb, bes[i]->name, json_pack("{s:b, s:b}", "reproduces_a", ra,
                                                        "reproduces_b", rb));
        if (strcmp(bes[i]->name, "oracle") == 0) {
            rp->oracle_a = ra;
            rp->oracle_b = rb;
        } else {
            if (ra)
                add_name(rp->a, sizeof rp->a, bes[i]->name);
            if (rb)
                add_name(rp->b, sizeof rp->b, bes[i]->name);
        }
        if (strcmp(bes[i]->name, "oracle") == 0) {
            *orc_out = bufs;
        } else {
            bp_backend_bufs_free(bufs, p->nops);
            free(bufs);
        }
    }
    for (int i = 0; i < nsk; i++) {
        bp_esc_printf(stdout, "  %-7s skipped: %s\n", skipped[i].name, skipped[i].why);
        json_object_set_new(jb, skipped[i].name, json_pack("{s:s}", "skipped", skipped[i].why));
    }
    json_object_set_new(js, "backends", jb);
    if (*orc_out)
        cast_change(p, *orc_out, js);
    for (int i = 0; i < nb; i++)
        bp_backend_close(bes[i]);
    return rc;
}

/* Per element, as explain reports it: when both sides' outputs were
 * captured, the probe's buffers on each side (the loaded inputs, then the
 * side's output) through bp_explain_run, with the oracle's verdicts. */
static int elements(const eopts_t *o, const bp_probe_t *p, const rec_t rec[2],
                    const bp_buf_t *orc_bufs)
{
    if (!rec[0].val || !rec[1].val || !orc_bufs ||
        (rec[0].t->hash == rec[1].t->hash && !strcmp(rec[0].t->dtype, rec[1].t->dtype)))
        return 0;
    const bp_buf_t *y = &orc_bufs[p->nops - 1];
    for (int s = 0; s < 2; s++)
        if (rec[s].val->buf.dtype != y->dtype || rec[s].val->buf.numel != y->numel)
            return 0;
    bp_buf_t *sb[2] = {calloc(p->nops, sizeof(bp_buf_t)), calloc(p->nops, sizeof(bp_buf_t))};
    bp_error_t err = {0};
    bp_status st = sb[0] && sb[1] ? BP_OK : BP_ENOMEM;
    for (int s = 0; !st && s < 2; s++)
        for (size_t i = 0; !st && i < p->nops; i++) {
            st = bp_buf_copy(&sb[s][i], i + 1 < p->nops ? &orc_bufs[i] : &rec[s].val->buf, &err);
            if (!st && i + 1 == p->nops) /* the recorded shape as the probe makes it */
                memcpy(sb[s][i].shape, y->shape, sizeof y->shape), sb[s][i].ndim = y->ndim;
        }
    bp_backend_t *oracle = NULL;
    if (!st)
        st = bp_backend_open("oracle", &o->dev.be, &oracle, &err);
    int rc = 0;
    if (!st) {
        bp_explain_side_t a = {.label = "A", .source = "ledger A", .bufs = sb[0]};
        bp_explain_side_t b = {.label = "B", .source = "ledger B", .bufs = sb[1]};
        bp_explain_opts_t eo = {.first_k = o->first, .oracle = oracle};
        bp_explain_t x;
        bp_dtype_t dt = BP_F32;
        for (int d = BP_F32; d < BP_NDTYPES; d++)
            if (p->dtypes & (1u << d)) {
                dt = (bp_dtype_t)d;
                break;
            }
        if (!(st = bp_explain_run(p, dt, &a, &b, &eo, &x, &err))) {
            printf("\n");
            rc = bp_rep_explain_text(stdout, &x);
            bp_explain_free(&x);
        }
    }
    if (st)
        bp_esc_printf(stdout, "  (no per-element detail: %s)\n", err.msg);
    bp_backend_close(oracle);
    for (int s = 0; s < 2; s++) {
        bp_backend_bufs_free(sb[s], sb[s] ? p->nops : 0);
        free(sb[s]);
    }
    return rc;
}

static int explain_entry(const eopts_t *o, const bp_ledger_diff_t *d, size_t x, caps_t *c)
{
    const bp_ledger_entry_t *e = &d->e[x];
    const bp_ledger_op_t *op = bp_ledger_entry_op(d, e);
    char id[64], tag[32], origin[512];
    if (e->a >= 0 && e->b >= 0)
        snprintf(id, sizeof id, "A#%ld B#%ld", e->a, e->b);
    else
        snprintf(id, sizeof id, "%s#%ld (only in %s)", e->a >= 0 ? "A" : "B",
                 e->a >= 0 ? e->a : e->b, e->a >= 0 ? "A" : "B");
    snprintf(tag, sizeof tag, "%c%ld", e->b >= 0 ? 'b' : 'a', e->b >= 0 ? e->b : e->a);
    bp_esc_printf(stdout, "explain %s %s in module '%s': %s\n", id, op->op, *op->module ? op->module :
           "(no module)", bp_lop_status_name(e->status));
    if (e->status != BP_LOP_INTRODUCED)
        bp_esc_printf(stdout, "  note: this op did not introduce the difference (its inputs %s); the probe "
               "below runs it on %s's inputs\n", e->status == BP_LOP_IDENTICAL ? "and outputs "
               "agree" : "already differed", e->b >= 0 ? "B" : "A");
    snprintf(origin, sizeof origin, "A: %s%s%ld, B: %s%s%ld", d->A->path,
             e->a >= 0 ? " #" : " (none)", e->a >= 0 ? e->a : 0L, d->B->path,
             e->b >= 0 ? " #" : " (none)", e->b >= 0 ? e->b : 0L);
    for (char *s = origin; *s; s++) /* the comment stays one line */
        if (*s == '\n')
            *s = ' ';
    bp_ledger_map_t m;
    bp_error_t err = {0};
    if (bp_ledger_map(op, tag, origin, &m, &err))
        return bp_cli_fail(&err);
    rec_t rec[2] = {{0}, {0}};
    for (int s = 0; s < 2; s++) {
        long i = s ? e->b : e->a;
        const bp_ledger_t *L = s ? d->B : d->A;
        if (i >= 0 && L->ops[i].nout == 1) {
            rec[s].t = &L->ops[i].out[0];
            rec[s].val = find_capture(c, rec[s].t);
        }
    }
    char ypath[PATH_MAX];
    int rc = write_files(o->out_dir, &m, op, c, rec, ypath, sizeof ypath);
    bp_ledger_map_free(&m);
    if (rc)
        return rc;
    bp_probe_t *p = NULL;
    if (bp_probe_load(ypath, &p, &err)) {
        bp_error_prefix(&err, "the written probe does not load: ");
        return bp_cli_fail(&err);
    }
    json_t *js = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o}", "op", op->op, "module", op->module,
                           "status", bp_lop_status_name(e->status), "probe", ypath,
                           "a", e->a >= 0 ? json_integer(e->a) : json_null(),
                           "b", e->b >= 0 ? json_integer(e->b) : json_null());
    bp_buf_t *orc = NULL;
    repro_t rp = {.a = "", .b = ""};
    rc = run_backends(o, p, rec, &orc, js, &rp);
    if (!rc) {
        bp_esc_printf(stdout, "the oracle's verdict (correctly rounded %s):\n", bp_dtype_name(p->ops[p->nops - 1].dtype));
        json_t *jv = json_object();
        side_line("A", &rec[0], orc ? &orc[p->nops - 1] : NULL, jv);
        side_line("B", &rec[1], orc ? &orc[p->nops - 1] : NULL, jv);
        json_object_set_new(js, "verdict", jv);
        rc = elements(o, p, rec, orc);
        conclude(rec, &rp, js);
    }
    if (orc) {
        bp_backend_bufs_free(orc, p->nops);
        free(orc);
    }
    bool differ = !(rec[0].t && rec[1].t && rec[0].t->has_hash && rec[1].t->has_hash &&
                    rec[0].t->hash == rec[1].t->hash && !strcmp(rec[0].t->dtype, rec[1].t->dtype));
    if (!rc && o->json)
        rc = bp_cli_json_out("explain", o->json, json_pack("{s:s, s:o}", "tool", "bitprobe",
                                                           "ledger_explain", js));
    else
        json_decref(js);
    bp_probe_free(p);
    return rc ? rc : differ ? BP_EXIT_DRIFT : BP_EXIT_OK;
}

int cmd_explain_ledger(const char *pa, const char *pb, const char *op_id, const char *out_dir,
                       const bp_cli_devices_t *dev, size_t first, const char *json)
{
    if (!bp_ledger_sniff(pa) || !bp_ledger_sniff(pb)) {
        bp_esc_printf(stderr,
                      "bitprobe explain: '%s' is not an op ledger: explain takes two ledgers "
                      "or a probe with --a and --b\n",
                      bp_ledger_sniff(pa) ? pb : pa);
        return BP_EXIT_TROUBLE;
    }
    struct stat sb;
    if (stat(out_dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        bp_esc_printf(stderr, "bitprobe explain: --out '%s' is not a directory\n", out_dir);
        return BP_EXIT_TROUBLE;
    }
    int side = 1;
    long seq = -1;
    if (op_id && !parse_op_id(op_id, &side, &seq))
        return bp_cli_usage_error("explain", "--op takes an op of B (23, b23) or of A (a23), "
                                  "not '%s'", op_id);
    eopts_t o = {.op_id = op_id, .out_dir = out_dir, .json = json, .dev = *dev,
                 .first = first};
    bp_error_t err = {0};
    bp_ledger_t A, B;
    bp_ledger_diff_t d;
    if (bp_ledger_diff_files(pa, pb, &A, &B, &d, &err))
        return bp_cli_fail(&err);
    caps_t c = {.L = {&A, &B}};
    int rc = BP_EXIT_OK;
    for (int s = 0; s < 2 && !rc; s++) {
        const bp_ledger_t *L = s ? &B : &A;
        if (!L->ncaptures)
            continue;
        if (bp_ledger_read_captures(L, &c.caps[s], &err))
            rc = bp_cli_fail(&err);
        else
            c.has_caps[s] = true;
    }
    size_t x = op_id ? bp_ledger_diff_find(&d, side, seq) : d.first_introduced;
    if (!rc && x == SIZE_MAX) {
        if (op_id) {
            bp_esc_printf(stderr, "bitprobe explain: %s has no op %ld\n", side ? pb : pa, seq);
            rc = BP_EXIT_TROUBLE;
        } else if (!d.count[BP_LOP_INTRODUCED] && !d.count[BP_LOP_INHERITED]) {
            printf("nothing to explain: no op of A and B differs\n");
        } else {
            bp_esc_printf(stderr,
                          "bitprobe explain: no recorded op introduced the difference (an "
                          "input that differs came from outside the recording: see 'bitprobe "
                          "diff %s %s'); name an op with --op\n",
                          pa, pb);
            rc = BP_EXIT_DRIFT;
        }
    }
    if (!rc && x != SIZE_MAX)
        rc = explain_entry(&o, &d, x, &c);
    bp_ledger_diff_free(&d);
    for (int s = 0; s < 2; s++)
        if (c.has_caps[s])
            bp_st_free(&c.caps[s]);
    bp_ledger_free(&A);
    bp_ledger_free(&B);
    return rc;
}
