/* Tests of the probe format: the shipped probes load and infer the shapes
 * and dtypes PyTorch gives the same expressions (derived by hand from the
 * PyTorch code each probe mirrors); every file of the bad-input corpus is
 * refused with its message at its position; the hash moves with the
 * definition and not with its formatting; type promotion and arange length
 * follow PyTorch's rules (expected values written out from those rules). */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op.h"
#include "probe.h"
#include "st.h"
#include "test_files.h"

static char tmpdir[512];

static void tmp_setup(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/check_probe.XXXXXX", t && *t ? t : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void tmp_teardown(void)
{
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    char p[1024];
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
            unlink(p);
        }
    if (d)
        closedir(d);
    rmdir(tmpdir);
}

/* Writes text to tmpdir/<name>.yaml and returns the path (static buffer). */
static const char *write_probe(const char *name, const char *text)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s.yaml", tmpdir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static bp_probe_t *load_ok(const char *path)
{
    bp_probe_t *p = NULL;
    bp_error_t err = {0};
    bp_status st = bp_probe_load(path, &p, &err);
    ck_assert_msg(st == BP_OK, "loading %s: %s", path, err.msg);
    return p;
}

static bp_probe_t *load_text_ok(const char *name, const char *text)
{
    return load_ok(write_probe(name, text));
}

/* Loads text and expects BP_EINPUT with a message starting with
 * "<path>:" followed by want. */
static void load_text_bad(const char *name, const char *text, const char *want)
{
    const char *path = write_probe(name, text);
    bp_probe_t *p = NULL;
    bp_error_t err = {0};
    bp_status st = bp_probe_load(path, &p, &err);
    ck_assert_msg(st == BP_EINPUT, "%s: status %d (%s)", name, st, err.msg);
    ck_assert_ptr_null(p);
    char full[1200];
    snprintf(full, sizeof full, "%s:%s", path, want);
    ck_assert_msg(strncmp(err.msg, full, strlen(full)) == 0,
                  "%s:\n  got  '%s'\n  want '%s...'", name, err.msg, full);
}

/* ---- shipped probes -------------------------------------------------------- */

static const char *const shipped[] = {
    "arange-beyond-256", "arange-step",  "div-by-3-and-7",
    "div-by-decimal", "fp8-round-trip", "gelu-tanh-vs-erf", "layernorm",
    "linspace-positions", "matmul-fp32", "rmsnorm-llama",
    "rope-apply", "rope-llama2", "rope-llama2-zero-init", "rope-llama31-scaling",
    "sdpa-causal", "seed-div", "seed-inv-freq", "softmax-bf16-scores",
    "sum-fp32-accumulator", "sum-order", "swiglu-mlp", "unary-sweep",
};
#define NSHIPPED (sizeof shipped / sizeof shipped[0])

START_TEST(t_shipped_load)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/probes", test_top_srcdir());
    bp_probe_t **ps;
    size_t n;
    bp_error_t err = {0};
    ck_assert_msg(bp_probe_load_dir(dir, &ps, &n, &err) == BP_OK, "%s", err.msg);
    ck_assert_uint_eq(n, NSHIPPED);
    for (size_t i = 0; i < n; i++) {
        /* sorted by name, in the order the table lists them (C collation) */
        ck_assert_str_eq(ps[i]->name, shipped[i]);
        ck_assert_uint_eq(strlen(ps[i]->hash), 16);
        ck_assert_uint_eq(strspn(ps[i]->hash, "0123456789abcdef"), 16);
        ck_assert_msg(ps[i]->description && strlen(ps[i]->description) > 10,
                      "%s has no description", ps[i]->name);
        ck_assert(ps[i]->noutputs > 0);
        bp_meta_t metas[64];
        ck_assert(ps[i]->nops <= 64);
        for (int dt = 0; dt < BP_NDTYPES; dt++)
            if (ps[i]->dtypes & (1u << dt))
                ck_assert_msg(bp_probe_infer(ps[i], (bp_dtype_t)dt, metas,
                                             &err) == BP_OK,
                              "%s", err.msg);
    }
    bp_probe_free_all(ps, n);
}
END_TEST

typedef struct {
    const char *probe;
    bp_dtype_t run;
    const char *buf;
    bp_dtype_t dtype;
    int ndim;
    int64_t shape[2];
} shape_case_t;

/* Dtypes and shapes as PyTorch allocates them for the expression each
 * probe mirrors (see the comment at the top of each probe file). */
static const shape_case_t shape_cases[] = {
    {"seed-div", BP_F32, "y", BP_F32, 0, {0}},
    {"seed-div", BP_BF16, "y", BP_BF16, 0, {0}},
    {"seed-inv-freq", BP_F32, "y", BP_F32, 1, {10}},
    {"seed-inv-freq", BP_F16, "x", BP_F16, 1, {10}},
    /* arange(0, dim, 2) with Python ints: int64, 64 elements */
    {"rope-llama2", BP_F32, "idx", BP_I64, 1, {64}},
    {"rope-llama2", BP_F32, "expo", BP_F32, 1, {64}},
    {"rope-llama2", BP_F32, "inv_freq", BP_F32, 1, {64}},
    {"rope-llama2", BP_F32, "freqs", BP_F32, 2, {4096, 64}},
    {"rope-llama2", BP_F32, "emb", BP_F32, 2, {4096, 128}},
    {"rope-llama2", BP_F32, "cos", BP_F32, 2, {4096, 128}},
    {"rope-llama2", BP_F32, "sin", BP_F32, 2, {4096, 128}},
    {"rope-llama2", BP_BF16, "cos_f32", BP_F32, 2, {4096, 128}},
    {"rope-llama2", BP_BF16, "cos", BP_BF16, 2, {4096, 128}},
    {"rope-llama2", BP_BF16, "inv_freq", BP_BF16, 1, {64}},
    {"rope-llama2", BP_F16, "sin", BP_F16, 2, {4096, 128}},
    /* zero.Init: bf16 positions; outer(bf16, fp32) promotes to fp32 */
    {"rope-llama2-zero-init", BP_BF16, "t", BP_BF16, 1, {4096}},
    {"rope-llama2-zero-init", BP_BF16, "freqs", BP_F32, 2, {4096, 64}},
    {"rope-llama2-zero-init", BP_BF16, "cos", BP_BF16, 2, {4096, 128}},
    {"rope-llama2-zero-init", BP_F16, "t", BP_F16, 1, {4096}},
    /* ceil(100 / 0.3) = ceil(333.33...) = 334 */
    {"arange-step", BP_BF16, "x", BP_BF16, 1, {334}},
    {"arange-beyond-256", BP_BF16, "pos", BP_BF16, 1, {1024}},
    {"arange-beyond-256", BP_BF16, "error", BP_F32, 1, {1024}},
    {"div-by-3-and-7", BP_F16, "x3", BP_F16, 1, {256}},
    {"div-by-3-and-7", BP_F32, "u7_recip", BP_F32, 1, {4096}},
    {"sum-order", BP_F32, "s", BP_F32, 0, {0}},
    {"sum-order", BP_BF16, "rows", BP_BF16, 1, {64}},
    {"matmul-fp32", BP_F32, "y", BP_F32, 2, {64, 64}},
    {"rope-apply", BP_F32, "emb", BP_F32, 2, {1016, 128}},
    {"rope-apply", BP_BF16, "cos", BP_BF16, 2, {16, 128}},
    {"rope-apply", BP_BF16, "q_embed", BP_BF16, 2, {16, 128}},
    {"unary-sweep", BP_F16, "pow_1_5", BP_F16, 1, {4096}},
};

START_TEST(t_shipped_shapes)
{
    const shape_case_t *c = &shape_cases[_i];
    char path[1024];
    snprintf(path, sizeof path, "%s/probes/%s.yaml", test_top_srcdir(), c->probe);
    bp_probe_t *p = load_ok(path);
    bp_meta_t metas[64];
    bp_error_t err = {0};
    ck_assert_msg(bp_probe_infer(p, c->run, metas, &err) == BP_OK, "%s", err.msg);
    int b = bp_probe_find_buf(p, c->buf);
    ck_assert_msg(b >= 0, "%s has no buffer %s", c->probe, c->buf);
    ck_assert_msg(metas[b].dtype == c->dtype, "%s.%s in %s: dtype %s, want %s",
                  c->probe, c->buf, bp_dtype_name(c->run),
                  bp_dtype_name(metas[b].dtype), bp_dtype_name(c->dtype));
    ck_assert_int_eq(metas[b].ndim, c->ndim);
    for (int d = 0; d < c->ndim; d++)
        ck_assert_int_eq(metas[b].shape[d], c->shape[d]);
    bp_probe_free(p);
}
END_TEST

START_TEST(t_shipped_outputs)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/probes/rope-llama2.yaml", test_top_srcdir());
    bp_probe_t *p = load_ok(path);
    ck_assert_uint_eq(p->noutputs, 3);
    ck_assert_str_eq(p->outputs[0].name, "inv_freq");
    ck_assert_str_eq(p->outputs[1].name, "cos");
    ck_assert_str_eq(p->outputs[2].name, "sin");
    ck_assert_int_eq(p->outputs[1].buf, bp_probe_find_buf(p, "cos"));
    ck_assert(!p->outputs[1].policy.has_ulp && !p->outputs[1].policy.has_tol);
    ck_assert_uint_eq(p->dtypes, (1u << BP_F32) | (1u << BP_BF16) | (1u << BP_F16));
    /* 1.0 / t is t.reciprocal() * 1.0: a float scalar, not an int */
    const bp_op_t *op = &p->ops[bp_probe_find_buf(p, "inv_freq_f32")];
    ck_assert_int_eq(op->kind, BP_OP_MUL);
    ck_assert_int_eq(op->b.kind, BP_ARG_SCALAR);
    ck_assert(op->b.value == 1.0 && !op->b.is_int);
    op = &p->ops[bp_probe_find_buf(p, "denom")];
    ck_assert_int_eq(op->kind, BP_OP_POW);
    ck_assert(op->a.kind == BP_ARG_SCALAR && op->a.value == 10000 && op->a.is_int);
    bp_error_t err = {0};
    bp_meta_t metas[64];
    ck_assert_int_eq(bp_probe_infer(p, BP_F64, metas, &err), BP_EINPUT);
    bp_probe_free(p);

    snprintf(path, sizeof path, "%s/probes/matmul-fp32.yaml", test_top_srcdir());
    p = load_ok(path);
    ck_assert(p->outputs[0].policy.has_tol);
    ck_assert(p->outputs[0].policy.abs == 1e-5 && p->outputs[0].policy.rel == 1e-5);
    ck_assert_int_eq(bp_probe_infer(p, BP_BF16, metas, &err), BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "does not run in bf16"), "%s", err.msg);
    bp_probe_free(p);
}
END_TEST

/* ---- the bad-input corpus ------------------------------------------------- */

typedef struct {
    const char *file;
    const char *want; /* after "<path>:" */
} bad_case_t;

static const bad_case_t bad_cases[] = {
    {"yaml-syntax.yaml", "6:8: invalid YAML: did not find expected ',' or '}' "
                         "(while parsing a flow mapping at line 5, column 5)"},
    {"bad-utf8.yaml", "2:19: invalid YAML: invalid trailing UTF-8 octet"},
    {"unknown-key.yaml", "5:36: unknown key 'stop' in op 'x' (arange) "
                         "(expected out, op, dtype, start, end, step)"},
    {"unknown-key-top.yaml", "3:1: unknown key 'author' in the probe"},
    {"duplicate-key.yaml", "10:5: duplicate key 'b' (first at line 9, column 5)"},
    {"wrong-type-string.yaml", "5:31: end must be a number, got 'ten'"},
    {"wrong-type-quoted.yaml",
     "5:31: end must be a number, got the quoted string \"10\""},
    {"wrong-type-list.yaml", "3:9: dtypes must be a list, got a string"},
    {"wrong-type-integer.yaml",
     "5:38: shape dimension must be an integer, got 2.5"},
    {"number-range.yaml", "5:38: values: number 1e999 is out of range"},
    {"unknown-op.yaml", "6:18: unknown op 'divide'"},
    {"undefined-buffer.yaml", "6:32: undefined buffer 'z'"},
    {"redefined-buffer.yaml",
     "6:11: buffer 'x' redefined (first defined at line 5, column 11)"},
    {"shape-mismatch.yaml", "7:5: shape mismatch: a is [4], b is [5] "
                            "(they do not broadcast) in op 'z' (add, fp32)"},
    {"shape-matmul.yaml", "6:5: shape mismatch: matmul needs [..., m, k] x [k, n], "
                          "a is [2, 3], b is [2, 3]"},
    {"shape-tensor.yaml", "5:58: shape holds 6 values but values has 5"},
    {"unknown-dtype.yaml", "5:41: unknown dtype 'float8'"},
    {"run-dtype-fp64.yaml", "3:16: a probe runs in fp32, bf16 or fp16, not fp64"},
    {"unknown-param.yaml", "6:31: unknown parameter '$m' in end"},
    {"reserved-param.yaml", "3:10: parameter name 'dtype' is reserved"},
    {"cycle-forward.yaml", "6:32: cycle: op 'y' reads 'z' before the op that "
                           "defines it (line 7, column 11)"},
    {"cycle-self.yaml", "6:26: cycle: op 'y' reads its own output 'y'"},
    {"anchor.yaml", "3:9: anchors are not allowed (&p)"},
    {"alias.yaml", "6:32: aliases are not allowed (*two)"},
    {"alias-bomb.yaml", "3:4: anchors are not allowed (&a)"},
    {"tag.yaml", "5:31: tags are not allowed (tag:yaml.org,2002:int)"},
    {"tag-local.yaml", "5:5: tags are not allowed (!op)"},
    {"missing-key.yaml", "6:5: missing required key 'b' in op 'y' (div)"},
    {"missing-key-top.yaml", "1:1: missing required key 'outputs' in the probe"},
    {"empty-ops.yaml", "4:6: ops is empty"},
    {"unknown-output.yaml", "8:12: output 'q' names no buffer"},
    {"duplicate-output.yaml",
     "8:12: output 'x' listed twice (first at line 7, column 12)"},
    {"name-mismatch.yaml", "1:7: name 'something-else' does not match the "
                           "file name 'name-mismatch.yaml'"},
    {"Invalid_Name.yaml", "1:7: invalid probe name 'Invalid_Name'"},
    {"too-deep.yaml", "2:77: nesting deeper than 64 levels"},
    {"empty-file.yaml", "1:1: empty file"},
    {"multi-doc.yaml", "8:1: more than one YAML document"},
    {"not-mapping.yaml", "1:1: a probe must be a mapping, got a list"},
    {"arange-zero-step.yaml", "5:50: arange step must be nonzero"},
    {"arange-sign.yaml", "5:5: arange bounds inconsistent with step sign"},
    {"int-dtype-fraction.yaml",
     "6:5: b: the number 0.5 is not an integer, but the result dtype is i64"},
    {"pow-exponent-overflow.yaml", "6:5: b: the exponent 100000 overflows fp16"},
    {"two-scalars.yaml", "5:5: op 'x' (add) needs a buffer as a or b"},
    {"bad-policy.yaml", "7:23: unknown policy 'loose'"},
    {"bad-formulation.yaml", "6:48: unknown formulation 'pairwise' for div"},
    {"normal-std.yaml", "5:61: normal needs a finite std >= 0, got -1"},
    {"baddbmm-shape.yaml", "6:5: shape mismatch: baddbmm needs batch1 [B, m, k] and "
                           "batch2 [B, k, n], got [2, 3, 4] and [2, 3, 4]"},
    {"linear-beta.yaml", "7:42: unknown key 'beta' in op 'y' (linear) "
                         "(expected out, op, dtype, inputs)"},
    {"linear-shape.yaml", "7:5: shape mismatch: linear needs x [..., k] and weight [n, k], "
                          "got [2, 3] and [3, 4]"},
    {"addmm-shape.yaml", "8:5: shape mismatch: addmm's input [3] does not broadcast to "
                         "[2, 4]"},
    {"clamp-buffer-bound.yaml", "7:36: min must be a number, got the buffer 'lo' "
                                "(tensor bounds: op clamp_tensor)"},
};
#define NBAD (sizeof bad_cases / sizeof bad_cases[0])

START_TEST(t_bad_corpus)
{
    const bad_case_t *c = &bad_cases[_i];
    char path[1024], full[1400];
    snprintf(path, sizeof path, "%s/tests/probes-bad/%s", test_top_srcdir(), c->file);
    bp_probe_t *p = NULL;
    bp_error_t err = {0};
    bp_status st = bp_probe_load(path, &p, &err);
    ck_assert_msg(st == BP_EINPUT, "%s: status %d, message '%s'", c->file, st,
                  err.msg);
    ck_assert_ptr_null(p);
    snprintf(full, sizeof full, "%s:%s", path, c->want);
    ck_assert_msg(strncmp(err.msg, full, strlen(full)) == 0,
                  "%s:\n  got  '%s'\n  want '%s...'", c->file, err.msg, full);
}
END_TEST

/* Every file of the corpus has an entry above: none is left unchecked. */
START_TEST(t_bad_corpus_complete)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests/probes-bad", test_top_srcdir());
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    size_t n = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        bool found = false;
        for (size_t i = 0; i < NBAD && !found; i++)
            found = strcmp(bad_cases[i].file, e->d_name) == 0;
        ck_assert_msg(found, "%s/%s has no expected message", dir, e->d_name);
        n++;
    }
    closedir(d);
    ck_assert_uint_eq(n, NBAD);
    /* and the corpus as a directory is refused at its first bad file */
    bp_probe_t **ps = NULL;
    size_t np = 7;
    bp_error_t err = {0};
    ck_assert_int_eq(bp_probe_load_dir(dir, &ps, &np, &err), BP_EINPUT);
    ck_assert_ptr_null(ps);
    ck_assert_uint_eq(np, 0);
}
END_TEST

START_TEST(t_bad_generated)
{
    /* over 1 MiB: refused before parsing */
    const char *path = write_probe("too-large", "");
    FILE *f = fopen(path, "w");
    fputs("name: too-large\ndescription: \"", f);
    for (int i = 0; i < (1 << 20) / 64 + 1; i++)
        fputs("0123456789012345678901234567890123456789012345678901234567890123", f);
    fputs("\"\n", f);
    fclose(f);
    bp_probe_t *p = NULL;
    bp_error_t err = {0};
    ck_assert_int_eq(bp_probe_load(path, &p, &err), BP_EINPUT);
    ck_assert_msg(strstr(err.msg, ":1:1: file too large (more than 1048576 bytes)"),
                  "%s", err.msg);
    /* missing file and directory: the operating system's refusal */
    char missing[1024];
    snprintf(missing, sizeof missing, "%s/absent.yaml", tmpdir);
    ck_assert_int_eq(bp_probe_load(missing, &p, &err), BP_EIO);
    ck_assert_msg(strstr(err.msg, "absent.yaml") && strstr(err.msg, "No such file"),
                  "%s", err.msg);
    ck_assert_int_eq(bp_probe_load(tmpdir, &p, &err), BP_EIO);
    ck_assert_ptr_null(p);
    bp_probe_t **ps;
    size_t n;
    ck_assert_int_eq(bp_probe_load_dir(missing, &ps, &n, &err), BP_EIO);
}
END_TEST

/* Errors found by inference only in one of the listed dtypes, and more
 * classes written inline. */
START_TEST(t_bad_inline)
{
    load_text_bad("matmul-mixed",
                  "name: matmul-mixed\ndescription: d\ndtypes: [fp32, bf16]\n"
                  "ops:\n"
                  "  - {out: a, op: uniform, shape: [2, 2], seed: 1, dtype: $dtype}\n"
                  "  - {out: b, op: uniform, shape: [2, 2], seed: 2}\n"
                  "  - {out: c, op: matmul, a: a, b: b}\n"
                  "outputs: [{name: c}]\n",
                  "7:5: matmul needs two float operands of one dtype, a is bf16, "
                  "b is fp32 in op 'c' (matmul, bf16)");
    load_text_bad("concat-shape",
                  "name: concat-shape\ndescription: d\ndtypes: [fp32]\nops:\n"
                  "  - {out: a, op: uniform, shape: [2, 3], seed: 1}\n"
                  "  - {out: b, op: uniform, shape: [3, 3], seed: 1}\n"
                  "  - {out: c, op: concat, inputs: [a, b], axis: 1}\n"
                  "outputs: [{name: c}]\n",
                  "7:5: shape mismatch: concat along axis 1 of [2, 3] and [3, 3]");
    load_text_bad("outer-2d",
                  "name: outer-2d\ndescription: d\ndtypes: [fp32]\nops:\n"
                  "  - {out: a, op: uniform, shape: [2, 3], seed: 1}\n"
                  "  - {out: c, op: outer, a: a, b: a}\n"
                  "outputs: [{name: c}]\n",
                  "6:5: shape mismatch: outer needs 1-D operands");
    load_text_bad("int-sin",
                  "name: int-sin\ndescription: d\ndtypes: [fp32]\nops:\n"
                  "  - {out: a, op: arange, end: 4}\n"
                  "  - {out: c, op: sin, a: a, dtype: i64}\n"
                  "outputs: [{name: c}]\n",
                  "6:5: sin cannot produce the integer dtype i64");
    /* PyTorch refuses an integer softmax (an empty one gives int64 where
     * bitprobe gave fp32: fuzz seed 20261202, probe 1086, op 10); with a
     * float dtype asked for, it converts first */
    load_text_bad("int-log-softmax",
                  "name: int-log-softmax\ndescription: d\ndtypes: [fp32]\nops:\n"
                  "  - {out: a, op: arange, end: 4}\n"
                  "  - {out: e, op: slice, a: a, start: 1, end: 0, axis: 0}\n"
                  "  - {out: c, op: log_softmax, a: e, axis: 0}\n"
                  "outputs: [{name: c}]\n",
                  "7:5: log_softmax of a tensor of dtype i64: PyTorch has no integer "
                  "kernel for it and refuses it; cast to a float dtype first");
    load_text_bad("int-mean",
                  "name: int-mean\ndescription: d\ndtypes: [fp32]\nops:\n"
                  "  - {out: a, op: arange, end: 4}\n"
                  "  - {out: c, op: mean, a: a}\n"
                  "outputs: [{name: c}]\n",
                  "6:5: mean of a tensor of dtype i64: PyTorch");
    load_text_bad("scalar-unary",
                  "name: scalar-unary\ndescription: d\ndtypes: [fp32]\nops:\n"
                  "  - {out: c, op: exp, a: 2}\n"
                  "outputs: [{name: c}]\n",
                  "5:26: a must be a buffer name, got the number 2");
    load_text_bad("cast-no-dtype",
                  "name: cast-no-dtype\ndescription: d\ndtypes: [fp32]\nops:\n"
                  "  - {out: a, op: arange, end: 4}\n"
                  "  - {out: c, op: cast, a: a}\n"
                  "outputs: [{name: c}]\n",
                  "6:5: missing required key 'dtype' in op 'c' (cast)");
    load_text_bad("rotate-odd",
                  "name: rotate-odd\ndescription: d\ndtypes: [fp32]\nops:\n"
                  "  - {out: a, op: uniform, shape: [3], seed: 1}\n"
                  "  - {out: c, op: rotate_half, a: a}\n"
                  "outputs: [{name: c}]\n",
                  "6:5: rotate_half needs an even last dimension");
    load_text_bad("slice-step",
                  "name: slice-step\ndescription: d\ndtypes: [fp32]\nops:\n"
                  "  - {out: a, op: uniform, shape: [3], seed: 1}\n"
                  "  - {out: c, op: slice, a: a, step: 0}\n"
                  "outputs: [{name: c}]\n",
                  "6:37: step must be between 1 and");
    load_text_bad("sum-axis",
                  "name: sum-axis\ndescription: d\ndtypes: [fp32]\nops:\n"
                  "  - {out: a, op: uniform, shape: [3], seed: 1}\n"
                  "  - {out: c, op: sum, a: a, axis: 1}\n"
                  "outputs: [{name: c}]\n",
                  "6:5: sum axis 1 out of range for [3]");
    load_text_bad("policy-key",
                  "name: policy-key\ndescription: d\ndtypes: [fp32]\nops:\n"
                  "  - {out: a, op: arange, end: 4}\n"
                  "outputs: [{name: a, policy: {ulps: 2}}]\n",
                  "6:30: unknown key 'ulps' in policy");
    load_text_bad("policy-fraction",
                  "name: policy-fraction\ndescription: d\ndtypes: [fp32]\nops:\n"
                  "  - {out: a, op: arange, end: 4}\n"
                  "outputs: [{name: a, policy: {max_mismatch_fraction: 2}}]\n",
                  "6:53: max_mismatch_fraction must be between 0 and 1");
    load_text_bad("dtype-twice",
                  "name: dtype-twice\ndescription: d\ndtypes: [fp32, bf16, fp32]\n",
                  "3:22: dtype fp32 listed twice");
    load_text_bad("dollar-dtype-number",
                  "name: dollar-dtype-number\ndescription: d\ndtypes: [fp32]\nops:\n"
                  "  - {out: a, op: arange, end: $dtype}\n",
                  "5:31: end must be a number, got $dtype (a dtype)");
    load_text_bad("param-ref",
                  "name: param-ref\ndescription: d\nparams: {a: 1, b: $a}\n",
                  "3:19: parameter 'b' must be a number, not a reference");
    load_text_bad("key-map",
                  "name: key-map\ndescription: d\n? [a, b]\n: 1\n",
                  "3:3: mapping keys must be strings, got a list");
    load_text_bad("ops-scalar",
                  "name: ops-scalar\ndescription: d\ndtypes: [fp32]\nops: [3]\n",
                  "4:7: each op must be a mapping, got a string");
    load_text_bad("uniform-range",
                  "name: uniform-range\ndescription: d\ndtypes: [fp32]\nops:\n"
                  "  - {out: a, op: uniform, shape: [3], seed: 1, low: 2, high: 1}\n",
                  "5:5: uniform needs finite low <= high");
    load_text_bad("normal-mean",
                  "name: normal-mean\ndescription: d\ndtypes: [fp32]\nops:\n"
                  "  - {out: a, op: normal, shape: [3], seed: 1, std: 1}\n",
                  "5:5: missing required key 'mean' in op 'a' (normal)");
    load_text_bad("huge-shape",
                  "name: huge-shape\ndescription: d\ndtypes: [fp32]\nops:\n"
                  "  - {out: a, op: uniform, shape: [1000000, 1000000, 1000000], "
                  "seed: 1}\n",
                  "5:34: shape: tensor too large");
    load_text_bad("bad-buffer-name",
                  "name: bad-buffer-name\ndescription: d\ndtypes: [fp32]\nops:\n"
                  "  - {out: 2x, op: arange, end: 4}\n",
                  "5:11: invalid buffer name '2x'");
}
END_TEST

/* ---- numbers, defaults and params ------------------------------------------ */

START_TEST(t_numbers)
{
    bp_probe_t *p = load_text_ok(
        "numbers",
        "name: numbers\ndescription: d\ndtypes: [fp32]\nops:\n"
        "  - {out: a, op: tensor, values: [0x1.8p+1, -.inf, .nan, 1e-6, +3, "
        "-0.0, 0x10, .5, 2.]}\n"
        "outputs: [{name: a}]\n");
    const bp_op_t *op = &p->ops[0];
    ck_assert_uint_eq(op->nvalues, 9);
    ck_assert(op->values[0] == 3.0);
    ck_assert(isinf(op->values[1]) && op->values[1] < 0);
    ck_assert(isnan(op->values[2]));
    ck_assert(op->values[3] == 1e-6);
    ck_assert(op->values[4] == 3.0);
    ck_assert(op->values[5] == 0.0 && signbit(op->values[5]));
    ck_assert(op->values[6] == 16.0);
    ck_assert(op->values[7] == 0.5 && op->values[8] == 2.0);
    ck_assert_int_eq(op->dtype, BP_F32); /* not all integers: f32 */
    bp_probe_free(p);
    /* torch.tensor([1, 2]) is int64; torch.tensor([1., 2]) is float32 */
    p = load_text_ok("ints", "name: ints\ndescription: d\ndtypes: [fp32]\nops:\n"
                             "  - {out: a, op: tensor, values: [1, 2]}\n"
                             "  - {out: b, op: tensor, values: [1.0, 2]}\n"
                             "outputs: [{name: a}, {name: b}]\n");
    ck_assert(p->ops[0].has_dtype && p->ops[0].dtype == BP_I64);
    ck_assert(p->ops[1].has_dtype && p->ops[1].dtype == BP_F32);
    ck_assert_int_eq(p->ops[0].ndim, 1);
    ck_assert_int_eq(p->ops[0].shape[0], 2);
    bp_probe_free(p);
}
END_TEST

START_TEST(t_params_and_defaults)
{
    bp_probe_t *p = load_text_ok(
        "params",
        "name: params\ndescription: d\n"
        "params: {n: 10, half: 0.5, f: 10.0}\n"
        "dtypes: [fp32, fp16]\n"
        "ops:\n"
        "  - {out: i, op: arange, end: $n}\n"          /* torch.arange(10): i64 */
        "  - {out: g, op: arange, end: $f}\n"          /* torch.arange(10.): f32 */
        "  - {out: h, op: arange, start: 1, end: 4, step: $half, dtype: $dtype}\n"
        "  - {out: m, op: mul, a: i, b: 2}\n"          /* i64 * 2: i64 */
        "  - {out: m2, op: mul, a: i, b: 2.0}\n"       /* i64 * 2.0: f32 */
        "  - {out: d, op: div, a: i, b: $n}\n"         /* true division: f32 */
        "  - {out: e, op: exp, a: i}\n"                /* float function: f32 */
        "  - {out: ng, op: neg, a: i}\n"               /* stays i64 */
        "  - {out: s, op: sum, a: i}\n"
        "  - {out: sl, op: slice, a: i, start: -3}\n"
        "  - {out: sl2, op: slice, a: i, start: 1, end: 100, step: 3}\n"
        "  - {out: sm, op: sum, a: h, formulation: pairwise}\n"
        "outputs:\n"
        "  - {name: m, policy: exact}\n"
        "  - {name: d, policy: {ulp: 2, max_mismatch_fraction: 0.25}}\n"
        "  - {name: e, policy: {abs: 1e-3}}\n");
    ck_assert_uint_eq(p->nparams, 3);
    ck_assert_str_eq(p->params[0].name, "n");
    ck_assert(p->params[0].value == 10);
    const bp_op_t *h = &p->ops[2];
    ck_assert(h->start == 1 && h->end == 4 && h->step == 0.5);
    ck_assert(h->has_dtype && h->dtype_is_run);
    ck_assert(p->ops[3].b.kind == BP_ARG_SCALAR && p->ops[3].b.is_int);
    ck_assert(p->ops[4].b.kind == BP_ARG_SCALAR && !p->ops[4].b.is_int);
    ck_assert(p->ops[5].b.is_int && p->ops[5].b.value == 10);
    ck_assert_int_eq(p->ops[11].form, BP_FORM_PAIRWISE);
    ck_assert_int_eq(p->ops[5].form, BP_FORM_DEFAULT);
    ck_assert(!p->outputs[0].policy.has_ulp && !p->outputs[0].policy.has_tol);
    ck_assert(p->outputs[1].policy.has_ulp && p->outputs[1].policy.max_ulp == 2);
    ck_assert(p->outputs[1].policy.max_mismatch_fraction == 0.25);
    ck_assert(p->outputs[2].policy.has_tol && p->outputs[2].policy.abs == 1e-3 &&
              p->outputs[2].policy.rel == 0);

    bp_meta_t m[16];
    bp_error_t err = {0};
    ck_assert_msg(bp_probe_infer(p, BP_F16, m, &err) == BP_OK, "%s", err.msg);
    static const struct {
        const char *buf;
        bp_dtype_t dt;
        int ndim;
        int64_t n;
    } want[] = {
        {"i", BP_I64, 1, 10}, {"g", BP_F32, 1, 10}, {"h", BP_F16, 1, 6},
        {"m", BP_I64, 1, 10}, {"m2", BP_F32, 1, 10}, {"d", BP_F32, 1, 10},
        {"e", BP_F32, 1, 10}, {"ng", BP_I64, 1, 10}, {"s", BP_I64, 0, 0},
        {"sl", BP_I64, 1, 3},   /* [7, 8, 9] */
        {"sl2", BP_I64, 1, 3},  /* [1, 4, 7] */
        {"sm", BP_F16, 0, 0},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        int b = bp_probe_find_buf(p, want[k].buf);
        ck_assert_int_ge(b, 0);
        ck_assert_msg(m[b].dtype == want[k].dt, "%s: %s", want[k].buf,
                      bp_dtype_name(m[b].dtype));
        ck_assert_int_eq(m[b].ndim, want[k].ndim);
        if (want[k].ndim)
            ck_assert_int_eq(m[b].shape[0], want[k].n);
    }
    ck_assert_int_eq(bp_probe_find_buf(p, "nope"), -1);
    bp_probe_free(p);
}
END_TEST

/* ---- inference rules, directly ------------------------------------------- */

static bp_meta_t mk(bp_dtype_t dt, int ndim, int64_t d0, int64_t d1)
{
    bp_meta_t m = {.dtype = dt, .ndim = ndim, .shape = {d0, d1}};
    return m;
}

START_TEST(t_promotion)
{
    /* torch.promote_types, written out */
    static const struct {
        bp_dtype_t a, b, want;
    } pairs[] = {
        {BP_BF16, BP_F16, BP_F32}, {BP_F16, BP_BF16, BP_F32},
        {BP_BF16, BP_F32, BP_F32}, {BP_F32, BP_F16, BP_F32},
        {BP_F64, BP_F32, BP_F64},  {BP_BF16, BP_BF16, BP_BF16},
        {BP_I32, BP_I64, BP_I64},  {BP_I32, BP_I32, BP_I32},
        {BP_I64, BP_BF16, BP_BF16}, {BP_F16, BP_I32, BP_F16},
    };
    bp_error_t err = {0};
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        bp_meta_t metas[2] = {mk(pairs[k].a, 1, 5, 0), mk(pairs[k].b, 1, 5, 0)};
        bp_meta_t out;
        bp_op_t op = {.kind = BP_OP_ADD, .a = {BP_ARG_BUF, 0, 0, false},
                      .b = {BP_ARG_BUF, 1, 0, false}};
        ck_assert_int_eq(bp_op_infer(&op, metas, BP_F32, &out, &err), BP_OK);
        ck_assert_msg(out.dtype == pairs[k].want, "%s + %s: %s",
                      bp_dtype_name(pairs[k].a), bp_dtype_name(pairs[k].b),
                      bp_dtype_name(out.dtype));
        op.kind = BP_OP_OUTER;
        ck_assert_int_eq(bp_op_infer(&op, metas, BP_F32, &out, &err), BP_OK);
        ck_assert_int_eq(out.dtype, pairs[k].want);
        ck_assert(out.ndim == 2 && out.shape[0] == 5 && out.shape[1] == 5);
    }
    /* a 0-D tensor decides only over a lower category (torch.result_type:
     * torch.ones(4, dtype=bf16) + torch.tensor(1.) is bf16) */
    static const struct {
        bp_dtype_t dimd, zero, want;
    } zd[] = {
        {BP_BF16, BP_F32, BP_BF16}, {BP_F16, BP_BF16, BP_F16},
        {BP_I64, BP_F32, BP_F32},   {BP_I32, BP_I64, BP_I32},
        {BP_I32, BP_F64, BP_F64},   {BP_F32, BP_F64, BP_F32},
    };
    for (size_t k = 0; k < sizeof zd / sizeof zd[0]; k++) {
        bp_meta_t metas[2] = {mk(zd[k].dimd, 1, 5, 0), mk(zd[k].zero, 0, 0, 0)};
        bp_meta_t out;
        bp_op_t op = {.kind = BP_OP_MUL, .a = {BP_ARG_BUF, 1, 0, false},
                      .b = {BP_ARG_BUF, 0, 0, false}};
        ck_assert_int_eq(bp_op_infer(&op, metas, BP_F32, &out, &err), BP_OK);
        ck_assert_msg(out.dtype == zd[k].want, "%s 0-D * %s[5]: %s",
                      bp_dtype_name(zd[k].zero), bp_dtype_name(zd[k].dimd),
                      bp_dtype_name(out.dtype));
        ck_assert(out.ndim == 1 && out.shape[0] == 5);
    }
    bp_meta_t z2[2] = {mk(BP_BF16, 0, 0, 0), mk(BP_F16, 0, 0, 0)};
    bp_meta_t zo;
    bp_op_t zop = {.kind = BP_OP_ADD, .a = {BP_ARG_BUF, 0, 0, false},
                   .b = {BP_ARG_BUF, 1, 0, false}};
    ck_assert_int_eq(bp_op_infer(&zop, z2, BP_F32, &zo, &err), BP_OK);
    ck_assert_int_eq(zo.dtype, BP_F32); /* two 0-D: promote_types */
    /* tensor with a Python number: the tensor's dtype, unless an int tensor
     * meets a float */
    static const struct {
        bp_dtype_t t;
        bool is_int;
        bp_op_kind_t k;
        bp_dtype_t want;
    } sc[] = {
        {BP_BF16, false, BP_OP_MUL, BP_BF16}, {BP_F16, true, BP_OP_ADD, BP_F16},
        {BP_I64, true, BP_OP_MUL, BP_I64},    {BP_I64, false, BP_OP_MUL, BP_F32},
        {BP_I32, true, BP_OP_SUB, BP_I32},    {BP_I64, true, BP_OP_DIV, BP_F32},
        {BP_I64, true, BP_OP_POW, BP_I64},    {BP_BF16, true, BP_OP_DIV, BP_BF16},
    };
    for (size_t k = 0; k < sizeof sc / sizeof sc[0]; k++) {
        bp_meta_t metas[1] = {mk(sc[k].t, 2, 3, 4)};
        bp_meta_t out;
        bp_op_t op = {.kind = sc[k].k, .a = {BP_ARG_SCALAR, 0, 2, sc[k].is_int},
                      .b = {BP_ARG_BUF, 0, 0, false}};
        ck_assert_int_eq(bp_op_infer(&op, metas, BP_F32, &out, &err), BP_OK);
        ck_assert_msg(out.dtype == sc[k].want, "case %zu: %s", k,
                      bp_dtype_name(out.dtype));
        ck_assert(out.ndim == 2 && out.shape[0] == 3 && out.shape[1] == 4);
    }
    /* explicit dtype, $dtype */
    bp_meta_t metas[1] = {mk(BP_F32, 1, 8, 0)};
    bp_meta_t out;
    bp_op_t op = {.kind = BP_OP_COS, .a = {BP_ARG_BUF, 0, 0, false},
                  .has_dtype = true, .dtype_is_run = true};
    ck_assert_int_eq(bp_op_infer(&op, metas, BP_BF16, &out, &err), BP_OK);
    ck_assert_int_eq(out.dtype, BP_BF16);
    op.dtype_is_run = false;
    op.dtype = BP_F64;
    ck_assert_int_eq(bp_op_infer(&op, metas, BP_BF16, &out, &err), BP_OK);
    ck_assert_int_eq(out.dtype, BP_F64);
    /* a formulation that belongs to another op */
    op.form = BP_FORM_PAIRWISE;
    ck_assert_int_eq(bp_op_infer(&op, metas, BP_BF16, &out, &err), BP_EINPUT);
}
END_TEST

START_TEST(t_arange_length)
{
    /* math.ceil((end - start) / step) in double, as compute_arange_size */
    static const struct {
        double start, end, step;
        int64_t n;
    } ok[] = {
        {0, 10, 1, 10},  {0, 100, 0.3, 334}, {1, 2.5, 0.5, 3}, {10, 0, -3, 4},
        {0, 0, 1, 0},    {0, 4096, 1, 4096}, {0, 128, 2, 64},  {1, 2, 0.3, 4},
        {-5, 5, 2.5, 4}, {0, 1, 0.1, 10},
    };
    bp_error_t err = {0};
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        int64_t n = -1;
        ck_assert_int_eq(bp_arange_length(ok[k].start, ok[k].end, ok[k].step,
                                          &n, &err), BP_OK);
        ck_assert_msg(n == ok[k].n, "arange(%g, %g, %g): %lld, want %lld",
                      ok[k].start, ok[k].end, ok[k].step, (long long)n,
                      (long long)ok[k].n);
    }
    int64_t n;
    ck_assert_int_eq(bp_arange_length(0, 4, 0, &n, &err), BP_EINPUT);
    ck_assert_int_eq(bp_arange_length(4, 0, 1, &n, &err), BP_EINPUT);
    ck_assert_int_eq(bp_arange_length(0, 4, -1, &n, &err), BP_EINPUT);
    ck_assert_int_eq(bp_arange_length(0, INFINITY, 1, &n, &err), BP_EINPUT);
    ck_assert_int_eq(bp_arange_length(NAN, 1, 1, &n, &err), BP_EINPUT);
    ck_assert_int_eq(bp_arange_length(0, 1, NAN, &n, &err), BP_EINPUT);
    ck_assert_int_eq(bp_arange_length(0, 1e300, 1e-300, &n, &err), BP_EINPUT);
}
END_TEST

START_TEST(t_slice_resolve)
{
    /* len(range(10)[start:end:step]) and its first index, from Python */
    static const struct {
        int64_t s, e, st, first, len;
    } c[] = {
        {0, INT64_MAX, 1, 0, 10}, {-3, INT64_MAX, 1, 7, 3}, {1, 100, 3, 1, 3},
        {5, 2, 1, 5, 0},          {-100, 4, 2, 0, 2},       {0, -1, 4, 0, 3},
        {12, 20, 1, 10, 0},       {2, 9, 7, 2, 1},
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        bp_op_t op = {.kind = BP_OP_SLICE, .s_start = c[k].s, .s_end = c[k].e,
                      .s_step = c[k].st};
        int64_t first, len;
        bp_slice_resolve(&op, 10, &first, &len);
        ck_assert_msg(len == c[k].len && (len == 0 || first == c[k].first),
                      "case %zu: first %lld len %lld", k, (long long)first,
                      (long long)len);
    }
}
END_TEST

/* ---- the hash ----------------------------------------------------------- */

static const char base_probe[] =
    "name: h\n"
    "description: \"first wording\"\n"
    "params: {n: 10, base: 10}\n"
    "dtypes: [fp32, bf16]\n"
    "ops:\n"
    "  - {out: pos, op: arange, start: 0, end: $n, dtype: $dtype}\n"
    "  - {out: x, op: div, a: pos, b: $n}\n"
    "  - {out: y, op: pow, a: $base, b: x}\n"
    "outputs:\n"
    "  - {name: y}\n"
    "  - {name: x, policy: {ulp: 1}}\n";

static void hash_of(const char *text, char out[17])
{
    bp_probe_t *p = load_text_ok("h", text);
    memcpy(out, p->hash, 17);
    bp_probe_free(p);
}

static char *replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    ck_assert_msg(at != NULL, "'%s' not in the base probe", from);
    size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
    char *s = malloc(n);
    snprintf(s, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    return s;
}

START_TEST(t_hash)
{
    char base[17], h[17];
    hash_of(base_probe, base);
    /* The canonical form is part of every golden's identity: this value may
     * change only together with a deliberate format change. */
    ck_assert_str_eq(base, "bb065aa094dee449");
    static const struct {
        const char *from, *to;
        bool same;
    } edits[] = {
        {"first wording", "second wording, much longer", true},
        {"params: {n: 10, base: 10}", "params: {base: 10, n: 10}", true},
        {"params: {n: 10, base: 10}", "params:\n  n: 10\n  base: 10", true},
        {"  - {name: y}\n", "  - name: y   # comment\n", true},
        {"end: $n, dtype", "end:    $n,   dtype", true},
        {"start: 0, end: $n", "end: $n, start: 0", true},
        {"policy: {ulp: 1}", "policy: {ulp: 0x1}", true},
        {"params: {n: 10, base: 10}", "params: {n: 10, base: 100}", false},
        {"params: {n: 10, base: 10}", "params: {n: 10, base: 10.0}", false},
        {"params: {n: 10, base: 10}", "params: {n: 10, base: 10, m: 1}", false},
        {"policy: {ulp: 1}", "policy: {ulp: 2}", false},
        {"policy: {ulp: 1}", "policy: exact", false},
        {"policy: {ulp: 1}", "policy: {ulp: 1, max_mismatch_fraction: 0.5}", false},
        {"  - {name: y}\n", "  - {name: y, policy: {abs: 0, rel: 0}}\n", false},
        {"dtypes: [fp32, bf16]", "dtypes: [fp32]", false},
        {"a: pos, b: $n}", "a: pos, b: $n, formulation: reciprocal}", false},
        {"dtype: $dtype}", "dtype: fp32}", false},
        {"op: pow", "op: mul", false},
        {"out: y", "out: z", false},
    };
    for (size_t k = 0; k < sizeof edits / sizeof edits[0]; k++) {
        char *t = replace(base_probe, edits[k].from, edits[k].to);
        if (strstr(t, "out: z")) { /* the output follows the rename */
            char *t2 = replace(t, "{name: y}", "{name: z}");
            free(t);
            t = t2;
        }
        hash_of(t, h);
        if (edits[k].same)
            ck_assert_msg(strcmp(h, base) == 0, "'%s' -> '%s' changed the hash",
                          edits[k].from, edits[k].to);
        else
            ck_assert_msg(strcmp(h, base) != 0,
                          "'%s' -> '%s' left the hash alone", edits[k].from,
                          edits[k].to);
        free(t);
    }
}
END_TEST

/* load: the tensor next to the probe, bit for bit; every way the file can
 * disagree with the op, at the op's position; the hash covers the bytes. */
static void write_tensors(const char *name, const float *v, size_t n, bool as_f16)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.safetensors", tmpdir, name);
    bp_st_file_t f;
    bp_st_init(&f);
    bp_buf_t b;
    bp_error_t err = {0};
    int64_t shape[1] = {(int64_t)n};
    ck_assert(bp_buf_alloc(&b, as_f16 ? BP_F16 : BP_F32, 1, shape, &err) == BP_OK);
    for (size_t i = 0; i < n; i++)
        bp_buf_set(&b, i, v[i]);
    ck_assert(bp_st_add(&f, "x", &b, &err) == BP_OK);
    ck_assert(bp_st_write(path, &f, false, &err) == BP_OK);
    bp_buf_free(&b);
    bp_st_free(&f);
}

START_TEST(t_load)
{
    static const char yaml[] =
        "name: %s\ndescription: d\ndtypes: [fp32]\nops:\n"
        "  - {out: x, op: load, dtype: %s, shape: [%s]}\n"
        "  - {out: y, op: div, a: x, b: 10}\noutputs:\n  - {name: y}\n";
    char text[512];
    const float v[4] = {0, 1, 2, 9}, w[4] = {0, 1, 2, 8};
    snprintf(text, sizeof text, yaml, "ld", "fp32", "4");
    const char *path = write_probe("ld", text);
    write_tensors("ld", v, 4, false);
    bp_probe_t *p = NULL;
    bp_error_t err = {0};
    ck_assert_msg(bp_probe_load(path, &p, &err) == BP_OK, "%s", err.msg);
    ck_assert_uint_eq(p->ops[0].ndata, 16);
    ck_assert(memcmp(p->ops[0].data, v, 16) == 0);
    char h1[17];
    memcpy(h1, p->hash, 17);
    bp_probe_free(p);
    write_tensors("ld", w, 4, false);
    ck_assert(bp_probe_load(path, &p, &err) == BP_OK);
    ck_assert_str_ne(h1, p->hash); /* other inputs, another definition */
    bp_probe_free(p);
    /* From memory: parsed, but nothing to load. */
    ck_assert(bp_probe_parse(text, strlen(text), "ld.yaml", &p, &err) == BP_OK);
    ck_assert_ptr_null(p->ops[0].data);
    bp_probe_free(p);
    /* The file disagrees, or is not there. */
    write_tensors("ld", v, 4, true);
    ck_assert(bp_probe_load(path, &p, &err) == BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "ld.yaml:5:5: load 'x' says fp32 [4]") &&
                      strstr(err.msg, "holds fp16 [4]"), "%s", err.msg);
    snprintf(text, sizeof text, yaml, "ld", "fp32", "2, 2");
    path = write_probe("ld", text);
    ck_assert(bp_probe_load(path, &p, &err) == BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "says fp32 [2, 2]"), "%s", err.msg);
    snprintf(text, sizeof text, yaml, "ld2", "fp32", "4");
    path = write_probe("ld2", text);
    ck_assert(bp_probe_load(path, &p, &err) == BP_EIO);
    ck_assert_msg(strstr(err.msg, "ld2.yaml:5:5: load 'x' reads the probe's tensors: ") &&
                      strstr(err.msg, "ld2.safetensors"), "%s", err.msg);
    snprintf(text, sizeof text, "name: ld3\ndescription: d\ndtypes: [fp32]\nops:\n"
             "  - {out: z, op: load, dtype: fp32, shape: [4]}\noutputs:\n  - {name: z}\n");
    path = write_probe("ld3", text);
    write_tensors("ld3", v, 4, false);
    ck_assert(bp_probe_load(path, &p, &err) == BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "load 'z': ") && strstr(err.msg, "has no tensor 'z'"), "%s",
                  err.msg);
    /* $dtype is not a file's dtype; shape and dtype are required. */
    snprintf(text, sizeof text, yaml, "ld", "$dtype", "4");
    ck_assert(bp_probe_parse(text, strlen(text), "ld.yaml", &p, &err) == BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "load takes the dtype of the tensor in its file"), "%s",
                  err.msg);
    const char *nodt = "name: ld\ndescription: d\ndtypes: [fp32]\nops:\n"
                       "  - {out: x, op: load, shape: [4]}\noutputs:\n  - {name: x}\n";
    ck_assert(bp_probe_parse(nodt, strlen(nodt), "ld.yaml", &p, &err) == BP_EINPUT);
    ck_assert_msg(strstr(err.msg, "missing required key 'dtype'"), "%s", err.msg);
}
END_TEST

static Suite *probe_suite(void)
{
    Suite *s = suite_create("probe");
    TCase *tc = tcase_create("shipped");
    tcase_add_test(tc, t_shipped_load);
    tcase_add_loop_test(tc, t_shipped_shapes, 0,
                        (int)(sizeof shape_cases / sizeof shape_cases[0]));
    tcase_add_test(tc, t_shipped_outputs);
    suite_add_tcase(s, tc);

    tc = tcase_create("bad");
    tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
    tcase_add_loop_test(tc, t_bad_corpus, 0, (int)NBAD);
    tcase_add_test(tc, t_bad_corpus_complete);
    tcase_add_test(tc, t_bad_generated);
    tcase_add_test(tc, t_bad_inline);
    suite_add_tcase(s, tc);

    tc = tcase_create("schema");
    tcase_add_checked_fixture(tc, tmp_setup, tmp_teardown);
    tcase_add_test(tc, t_numbers);
    tcase_add_test(tc, t_params_and_defaults);
    tcase_add_test(tc, t_hash);
    tcase_add_test(tc, t_load);
    suite_add_tcase(s, tc);

    tc = tcase_create("infer");
    tcase_add_test(tc, t_promotion);
    tcase_add_test(tc, t_arange_length);
    tcase_add_test(tc, t_slice_resolve);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return test_run_suite(probe_suite());
}
