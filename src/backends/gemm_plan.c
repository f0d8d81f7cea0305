/* PyTorch's cuBLAS call for a GEMM, decided on the host (see gemm_plan.h).
 * Every function below is one of ATen's, named where it is. */
#include "gemm_plan.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define KIB ((size_t)1024)

/* ---- settings ------------------------------------------------------------ */

void bp_blas_settings_default(bp_blas_settings_t *s)
{
    memset(s, 0, sizeof *s);
    s->bf16_rpr = s->bf16_split = true;
    s->fp16_rpr = s->fp16_split = true;
    s->lib = BP_BLAS_CUBLAS;
    s->lt_workspace_kib = 1024; /* parseCUDABlasLtWorkspaceSize's default */
}

/* c10::utils::check_env: "1" is true and "0" false (also true/false). */
static int env_bool(const char *v)
{
    if (!v)
        return -1;
    if (strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0 || strcasecmp(v, "on") == 0 ||
        strcasecmp(v, "yes") == 0)
        return 1;
    if (strcmp(v, "0") == 0 || strcasecmp(v, "false") == 0 || strcasecmp(v, "off") == 0 ||
        strcasecmp(v, "no") == 0)
        return 0;
    return -1;
}

/* std::stoi's leading integer, or -1. */
static long long leading_int(const char *v)
{
    char *end;
    while (isspace((unsigned char)*v))
        v++;
    long long x = strtoll(v, &end, 10);
    return end == v || x < 0 ? -1 : x;
}

void bp_blas_settings_env(bp_blas_settings_t *s, const char *(*get)(const char *))
{
    const char *v;
    if (env_bool(get("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE")) == 1)
        s->tf32 = true;
    if (env_bool(get("TORCH_BLAS_PREFER_CUBLASLT")) == 1 ||
        env_bool(get("TORCH_BLAS_PREFER_HIPBLASLT")) == 1)
        s->lib = BP_BLAS_CUBLASLT;
    if ((v = get("DISABLE_ADDMM_CUDA_LT")) && strcmp(v, "1") == 0)
        s->addmm_lt_off = true;
    if ((v = get("CUBLAS_WORKSPACE_CONFIG")))
        snprintf(s->workspace_config, sizeof s->workspace_config, "%s", v);
    long long kib;
    if ((v = get("CUBLASLT_WORKSPACE_SIZE")) && (kib = leading_int(v)) >= 0)
        s->lt_workspace_kib = (size_t)kib;
}

static bp_status set_bool(const char *key, const char *val, bool *out, bp_error_t *err)
{
    int b = env_bool(val);
    if (b < 0)
        return bp_error_set(err, BP_EINPUT, "BLAS setting %s: '%s' is not 0, 1, true or false",
                            key, val);
    *out = b == 1;
    return BP_OK;
}

static bp_status parse_item(bp_blas_settings_t *s, char *item, bp_error_t *err)
{
    char *eq = strchr(item, '=');
    if (!eq || eq == item)
        return bp_error_set(err, BP_EINPUT, "BLAS setting '%s' is not KEY=VALUE", item);
    *eq = '\0';
    const char *k = item, *v = eq + 1;
    bp_status st = BP_OK;
    if (strcmp(k, "allow_tf32") == 0)
        st = set_bool(k, v, &s->tf32, err);
    else if (strcmp(k, "allow_bf16_reduced_precision_reduction") == 0)
        st = set_bool(k, v, &s->bf16_rpr, err);
    else if (strcmp(k, "allow_bf16_reduced_precision_reduction_split_k") == 0)
        st = set_bool(k, v, &s->bf16_split, err);
    else if (strcmp(k, "allow_fp16_reduced_precision_reduction") == 0)
        st = set_bool(k, v, &s->fp16_rpr, err);
    else if (strcmp(k, "allow_fp16_reduced_precision_reduction_split_k") == 0)
        st = set_bool(k, v, &s->fp16_split, err);
    else if (strcmp(k, "DISABLE_ADDMM_CUDA_LT") == 0)
        st = set_bool(k, v, &s->addmm_lt_off, err);
    else if (strcmp(k, "preferred_blas_library") == 0) {
        if (strcasecmp(v, "cublas") == 0 || strcasecmp(v, "default") == 0)
            s->lib = BP_BLAS_CUBLAS;
        else if (strcasecmp(v, "cublaslt") == 0)
            s->lib = BP_BLAS_CUBLASLT;
        else
            st = bp_error_set(err, BP_EINPUT, "BLAS setting preferred_blas_library: '%s' is "
                              "not cublas or cublaslt", v);
    } else if (strcmp(k, "CUBLAS_WORKSPACE_CONFIG") == 0) {
        if (strlen(v) >= sizeof s->workspace_config)
            st = bp_error_set(err, BP_EINPUT, "BLAS setting CUBLAS_WORKSPACE_CONFIG: '%s' is "
                              "longer than %zu characters", v, sizeof s->workspace_config - 1);
        else
            snprintf(s->workspace_config, sizeof s->workspace_config, "%s", v);
    } else if (strcmp(k, "CUBLASLT_WORKSPACE_SIZE") == 0) {
        char *end;
        long long kib = strtoll(v, &end, 10);
        if (end == v || *end || kib < 0 || kib > (1LL << 30))
            st = bp_error_set(err, BP_EINPUT, "BLAS setting CUBLASLT_WORKSPACE_SIZE: '%s' is "
                              "not a size in KiB", v);
        else
            s->lt_workspace_kib = (size_t)kib;
    } else {
        st = bp_error_set(err, BP_EINPUT,
                          "unknown BLAS setting '%s' (allow_tf32, "
                          "allow_bf16_reduced_precision_reduction[_split_k], "
                          "allow_fp16_reduced_precision_reduction[_split_k], "
                          "preferred_blas_library, CUBLAS_WORKSPACE_CONFIG, "
                          "CUBLASLT_WORKSPACE_SIZE, DISABLE_ADDMM_CUDA_LT)", k);
    }
    return st;
}

bp_status bp_blas_settings_parse(bp_blas_settings_t *s, const char *list, bp_error_t *err)
{
    char buf[512];
    if (strlen(list) >= sizeof buf)
        return bp_error_set(err, BP_EINPUT, "BLAS settings longer than %zu characters",
                            sizeof buf - 1);
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *it = strtok_r(buf, ",", &save); it;
         it = strtok_r(NULL, ",", &save)) {
        bp_status st = parse_item(s, it, err);
        if (st)
            return st;
    }
    /* Context::setAllow{BF,FP}16ReductionCuBLAS's check */
    if ((s->bf16_rpr && !s->bf16_split) || (s->fp16_rpr && !s->fp16_split))
        return bp_error_set(err, BP_EINPUT, "allow_splitk=False is not supported when "
                            "reduced precision reductions are enabled (set "
                            "allow_%s_reduced_precision_reduction=0 too)",
                            s->bf16_rpr && !s->bf16_split ? "bf16" : "fp16");
    return BP_OK;
}

bp_rpr_t bp_blas_rpr(const bp_blas_settings_t *s, bp_dtype_t dt)
{
    bool rpr = dt == BP_F16 ? s->fp16_rpr : s->bf16_rpr;
    bool split = dt == BP_F16 ? s->fp16_split : s->bf16_split;
    return rpr ? BP_RPR_ALLOW : split ? BP_RPR_DISALLOW : BP_RPR_DISALLOW_NO_SPLIT;
}

/* parseChosenWorkspaceSize: every ":SIZE:COUNT" (std::regex ":([0-9]+):([0-9]+)"
 * iterated over the string), SIZE KiB each; 0 when none matches. */
static size_t config_bytes(const char *c)
{
    size_t total = 0;
    const char *p = c;
    while (*p) {
        const char *q = p;
        if (*q == ':' && isdigit((unsigned char)q[1])) {
            char *e1;
            unsigned long long size = strtoull(q + 1, &e1, 10);
            if (*e1 == ':' && isdigit((unsigned char)e1[1])) {
                char *e2;
                unsigned long long count = strtoull(e1 + 1, &e2, 10);
                total += (size_t)size * KIB * (size_t)count;
                p = e2;
                continue;
            }
        }
        p++;
    }
    return total;
}

size_t bp_blas_workspace(const bp_blas_settings_t *s, int cc_major)
{
    if (s->pedantic)
        return (size_t)32 << 20;
    size_t def = cc_major >= 9 && cc_major <= 12 ? 4096 * 8 * KIB
                                                : 4096 * KIB * 2 + 16 * KIB * 8;
    if (!s->workspace_config[0])
        return def;
    size_t b = config_bytes(s->workspace_config);
    return b ? b : def; /* "Could not parse CUBLAS_WORKSPACE_CONFIG": the default */
}

size_t bp_blas_lt_workspace(const bp_blas_settings_t *s, int cc_major)
{
    size_t lt = s->lt_workspace_kib * KIB, ws = bp_blas_workspace(s, cc_major);
    return lt < ws ? lt : ws;
}

static const char *rpr_name(bp_rpr_t r)
{
    return r == BP_RPR_ALLOW ? "true" : r == BP_RPR_DISALLOW ? "false" : "false, split-K off";
}

json_t *bp_blas_settings_json(const bp_blas_settings_t *s, int cc_major)
{
    if (s->pedantic)
        return json_pack("{s:s, s:I}", "mode", "pedantic (bitprobe's pinned GEMM, not "
                         "PyTorch's)", "workspace_bytes",
                         (json_int_t)bp_blas_workspace(s, cc_major));
    return json_pack("{s:s, s:b, s:s, s:s, s:s, s:b, s:s?, s:I, s:I}", "mode",
                     "PyTorch 2.11's calls (at::cuda::blas)", "allow_tf32", s->tf32,
                     "allow_bf16_reduced_precision_reduction",
                     rpr_name(bp_blas_rpr(s, BP_BF16)),
                     "allow_fp16_reduced_precision_reduction",
                     rpr_name(bp_blas_rpr(s, BP_F16)), "preferred_blas_library",
                     s->lib == BP_BLAS_CUBLASLT ? "cublaslt" : "cublas",
                     "disable_addmm_cuda_lt", s->addmm_lt_off, "cublas_workspace_config",
                     s->workspace_config[0] ? s->workspace_config : NULL,
                     "workspace_bytes", (json_int_t)bp_blas_workspace(s, cc_major),
                     "lt_workspace_bytes", (json_int_t)bp_blas_lt_workspace(s, cc_major));
}

/* ---- numerics ------------------------------------------------------------ */

bp_status bp_gemm_numerics(const bp_blas_settings_t *s, bp_gemm_api_t api, bp_dtype_t dt,
                           bool batched, bp_gemm_numerics_t *num, bp_error_t *err)
{
    memset(num, 0, sizeof *num);
    bool f64 = dt == BP_F64, half = dt == BP_BF16 || dt == BP_F16;
    if (s->pedantic) { /* every GEMM through cublasGemmEx, pinned */
        num->math = BP_GEMM_MATH_PEDANTIC;
        num->compute = f64 ? BP_GEMM_COMPUTE_64F_PEDANTIC : BP_GEMM_COMPUTE_32F_PEDANTIC;
        return BP_OK;
    }
    /* getCurrentCUDABlasHandle sets the handle's mode on every call */
    unsigned handle = s->tf32 ? BP_GEMM_MATH_TF32 : BP_GEMM_MATH_DEFAULT;
    bp_rpr_t rpr = bp_blas_rpr(s, dt);
    if (api == BP_GEMM_LT || api == BP_GEMM_LT_BIAS) {
        num->math = handle;
        num->compute = f64 ? BP_GEMM_COMPUTE_64F
                       : dt == BP_F32 && s->tf32 ? BP_GEMM_COMPUTE_32F_FAST_TF32
                                                 : BP_GEMM_COMPUTE_32F;
        if (half && rpr != BP_RPR_ALLOW) {
            num->lt_mask = true;
            num->lt_mask_value = rpr == BP_RPR_DISALLOW
                                     ? BP_GEMM_LT_RED_COMPUTE | BP_GEMM_LT_RED_NONE
                                     : BP_GEMM_LT_RED_NONE;
        }
        return BP_OK;
    }
    num->compute = f64 ? BP_GEMM_COMPUTE_64F : BP_GEMM_COMPUTE_32F;
    if (!half) { /* cublasSgemm, cublasDgemm (StridedBatched): the handle's mode */
        num->typed = true;
        num->math = handle;
        return BP_OK;
    }
    num->tensor_op = true;
    if (batched) { /* bgemm_internal_cublas_*_helper: the handle's mode */
        num->math = handle;
        return BP_OK;
    }
    /* gemm_internal_cublas_{half,bfloat16}_helper */
    if (rpr == BP_RPR_DISALLOW_NO_SPLIT)
        return bp_error_set(err, BP_EINPUT,
                            "torch.backends.cuda.matmul.allow_%s_reduced_precision_reduction"
                            "(..., allow_splitk=False) requires the cuBLASLt backend "
                            "(preferred_blas_library=cublaslt)",
                            dt == BP_F16 ? "fp16" : "bf16");
    num->math = BP_GEMM_MATH_DEFAULT | (rpr == BP_RPR_DISALLOW ? BP_GEMM_MATH_NO_RRR : 0);
    return BP_OK;
}

/* ---- operand preparation ------------------------------------------------- */

static int64_t max1(int64_t x)
{
    return x > 1 ? x : 1;
}

/* prepare_matrix_for_cublas(tensor, transpose_tensor[, transpose_result]):
 * the flag, and whether PyTorch clones the tensor contiguous (the
 * geometry it then reads: *used). */
static bool prepare(const bp_strided_t *t, bool *trans, bp_strided_t *used)
{
    *used = *t;
    if (bp_strided_is_dense(t)) {
        *trans = bp_strided_is_contiguous(t);
        return false;
    }
    if (t->strides[0] == 1 && t->strides[1] >= max1(t->shape[0])) {
        *trans = false;
        return false;
    }
    if (t->strides[1] == 1 && t->strides[0] >= max1(t->shape[1])) {
        *trans = true;
        return false;
    }
    *trans = true;
    bp_strided_contiguous(t->ndim, t->shape, used);
    return true;
}

/* prepare_batch_matrix_for_cublas */
static bool prepare_batch(const bp_strided_t *t, bool tr, int64_t m, int64_t n, bool *trans,
                          int64_t *ld, bp_strided_t *used)
{
    int fast = tr ? 2 : 1, lead = tr ? 1 : 2;
    *used = *t;
    if (t->strides[fast] == 1 && t->strides[lead] >= max1(m)) {
        *trans = false;
        *ld = t->strides[lead];
        return false;
    }
    if (t->strides[lead] == 1 && t->strides[fast] >= max1(n)) {
        *trans = true;
        *ld = t->strides[fast];
        return false;
    }
    *trans = !tr;
    bool clone = !(bp_strided_is_contiguous(t) && t->strides[1] != 0 && t->strides[2] != 0);
    if (clone)
        bp_strided_contiguous(t->ndim, t->shape, used);
    *ld = used->strides[1];
    return clone;
}

/* _cublasAdjustLdLevel3: leading dimensions of 1-long dimensions, which
 * cuBLAS checks anyway. */
static void adjust_ld(bp_gemm_call_t *c)
{
    if (c->n <= 1)
        c->ldc = max1(c->m);
    if (c->transa) {
        if (c->m <= 1)
            c->lda = max1(c->k);
    } else if (c->k <= 1) {
        c->lda = max1(c->m);
    }
    if (c->transb) {
        if (c->k <= 1)
            c->ldb = max1(c->n);
    } else if (c->n <= 1) {
        c->ldb = max1(c->k);
    }
}

/* Scalar::to<opmath_t>: float for fp32, bf16 and fp16.  Not written as
 * `dt == BP_F64 ? v : (double)(float)v` twice in a row: GCC 12.2's SLP
 * vectorizer (-O2, x86-64) merges the two stores and drops the
 * conversion (alpha 0.1 stayed 0.1 in double). */
static double opmath(bp_dtype_t dt, double v)
{
    if (dt == BP_F64)
        return v;
    volatile float f = (float)v;
    return f;
}

static bool float_gemm_dtype(bp_dtype_t dt)
{
    return dt == BP_F32 || dt == BP_F64 || dt == BP_BF16 || dt == BP_F16;
}

/* self squeezed (Tensor.squeeze()): its dimensions of size other than 1 */
static int squeezed_ndim(const bp_strided_t *g)
{
    int n = 0;
    for (int d = 0; d < g->ndim; d++)
        n += g->shape[d] != 1;
    return n;
}

/* isInputCompliesAddmmCudaLt for a fresh (2-D, contiguous) result, self
 * not the result, no activation: 2.10's rule, less mat1.size(0) > 1.
 * PyTorch 2.11 (its Blas.cpp reworks the Lt path: pytorch/pytorch PR
 * 170571) takes the bias epilogue for one row too: its cuBLASLt log of
 * F.linear and torch.addmm on x [1, 4096] (fp32, bf16, fp16, H200) shows
 * cublasLtMatmul with EPILOGUE_BIAS, beta 0.  The other sizes keep 2.10's
 * bound (mat2 of one row or column: cuBLAS), as do beta and the input's
 * shape; tests/gpu/linear_gpu.sh checks them against PyTorch. */
static bool addmm_lt_complies(bp_dtype_t dt, const bp_strided_t *self, const bp_strided_t *m1,
                              const bp_strided_t *m2, double beta)
{
    return beta == 1.0 && bp_strided_is_contiguous(self) &&
           (self->ndim == 1 || squeezed_ndim(self) == 1) && self->ndim >= 1 &&
           self->shape[self->ndim - 1] == m2->shape[1] && float_gemm_dtype(dt) &&
           m1->shape[1] > 1 && m2->shape[0] > 1 && m2->shape[1] > 1;
}

static bp_status shapes_2d(const bp_strided_t *m1, const bp_strided_t *m2, bp_error_t *err)
{
    if (m1->ndim != 2 || m2->ndim != 2 || m1->shape[1] != m2->shape[0])
        return bp_error_set(err, BP_EINTERNAL, "GEMM operands of %d and %d dimensions, or "
                            "inner sizes that differ", m1->ndim, m2->ndim);
    return BP_OK;
}

bp_status bp_gemm_plan_addmm(const bp_blas_settings_t *s, int cc_major, bp_dtype_t dt,
                             const bp_strided_t *self, const bp_strided_t *mat1,
                             const bp_strided_t *mat2, double beta, double alpha, bool no_lt,
                             bp_gemm_call_t *c, bp_error_t *err)
{
    memset(c, 0, sizeof *c);
    c->dtype = dt;
    c->batch = 1;
    bp_status st = shapes_2d(mat1, mat2, err);
    if (st)
        return st;
    if (!self) /* mm: addmm into the result itself, beta 0 */
        beta = 0.0, alpha = 1.0;
    bool lt = self && !s->pedantic && !s->addmm_lt_off && !no_lt &&
              addmm_lt_complies(dt, self, mat1, mat2, beta);
    bool bias_ptr_lt = lt && self->ndim == 1;
    c->copy_self = self && beta != 0.0 && !bias_ptr_lt;
    int64_t rs[2] = {mat1->shape[0], mat2->shape[1]};
    if (rs[0] == 0 || rs[1] == 0) {
        c->api = BP_GEMM_NONE;
        c->copy_self = false;
        return BP_OK;
    }
    if (mat1->shape[1] == 0) { /* the result is beta * self, or zeros */
        c->copy_self = beta != 0.0;
        c->api = beta == 0.0 ? BP_GEMM_ZERO : BP_GEMM_SCALE;
        /* at::mul_out with scalar_tensor(beta, self.dtype): beta in the dtype */
        c->scale = bp_dtype_round(dt, beta);
        return BP_OK;
    }
    /* cublasCommonArgs(mat1, mat2, result) */
    bp_strided_t res, a, b;
    bp_strided_contiguous(2, rs, &res);
    bool tr, ta, tb;
    (void)prepare(&res, &tr, &a); /* a fresh result needs no copy */
    c->a_op = tr ? 1 : 0;
    c->clone_a = prepare(tr ? mat2 : mat1, &ta, &a);
    c->clone_b = prepare(tr ? mat1 : mat2, &tb, &b);
    if (tr) {
        ta = !ta;
        tb = !tb;
    }
    c->transa = ta;
    c->transb = tb;
    c->m = a.shape[tr ? 1 : 0];
    c->k = a.shape[tr ? 0 : 1];
    c->n = b.shape[tr ? 0 : 1];
    c->lda = a.strides[ta == tr ? 1 : 0];
    c->ldb = b.strides[tb == tr ? 1 : 0];
    c->ldc = res.strides[tr ? 0 : 1];
    c->a_off = a.offset;
    c->b_off = b.offset;
    c->alpha = opmath(dt, alpha);
    c->beta = opmath(dt, beta);
    if (lt) {
        c->api = BP_GEMM_LT_BIAS;
        /* launchGemmAndBiasCublasLt: a bias pointer where self squeezes to
         * 1-D; gemm_and_bias then passes beta 0, else 1 */
        c->bias = self->ndim == 1 || squeezed_ndim(self) == 1;
        c->beta = c->bias ? 0.0 : 1.0;
    } else {
        c->api = s->lib == BP_BLAS_CUBLASLT && !s->pedantic ? BP_GEMM_LT : BP_GEMM_CUBLAS;
        adjust_ld(c);
        c->lt_fake_n2 = c->api == BP_GEMM_LT && c->n == 1 && cc_major >= 10 &&
                        (dt == BP_BF16 || dt == BP_F16) &&
                        bp_blas_rpr(s, dt) == BP_RPR_DISALLOW_NO_SPLIT;
    }
    return bp_gemm_numerics(s, c->api, dt, false, &c->num, err);
}

bp_status bp_gemm_plan_baddbmm(const bp_blas_settings_t *s, int cc_major, bp_dtype_t dt,
                               const bp_strided_t *self, const bp_strided_t *batch1,
                               const bp_strided_t *batch2, double beta, double alpha,
                               const bp_strided_t *result, bp_gemm_call_t *c,
                               bp_error_t *err)
{
    memset(c, 0, sizeof *c);
    c->dtype = dt;
    if (batch1->ndim != 3 || batch2->ndim != 3 || batch1->shape[0] != batch2->shape[0] ||
        batch1->shape[2] != batch2->shape[1])
        return bp_error_set(err, BP_EINTERNAL, "batched GEMM operands are not [B, m, k] "
                            "and [B, k, n]");
    if (!self)
        beta = 0.0, alpha = 1.0;
    int64_t rs[3] = {batch1->shape[0], batch1->shape[1], batch2->shape[2]};
    bp_strided_t res, a, b;
    bp_strided_contiguous(3, rs, &res);
    if (result) {
        if (result->ndim != 3 || memcmp(result->shape, rs, sizeof rs) != 0)
            return bp_error_set(err, BP_EINTERNAL, "batched GEMM result of another shape");
        res = *result;
    }
    c->copy_self = self && beta != 0.0; /* common_checks_baddbmm_bmm */
    if (bp_strided_numel(&res) == 0) {
        c->api = BP_GEMM_NONE;
        c->copy_self = false;
        return BP_OK;
    }
    if (batch1->shape[2] == 0) { /* result.zero_() or result.mul_(beta) */
        c->api = beta == 0.0 ? BP_GEMM_ZERO : BP_GEMM_SCALE;
        c->scale = opmath(dt, beta);
        return BP_OK;
    }
    const int64_t *rst = res.strides, *rsz = res.shape;
    bool tr;
    if (rst[1] == 1 && (rsz[2] == 1 || rst[2] >= max1(rsz[1])))
        tr = false;
    else if (rst[2] == 1 && (rsz[1] == 1 || rst[1] >= max1(rsz[2])))
        tr = true;
    else /* PyTorch copies such a result; a fresh one is never */
        return bp_error_set(err, BP_EINTERNAL, "batched GEMM result neither row- nor "
                            "column-major");
    int lead = tr ? 1 : 2;
    c->m = rsz[tr ? 2 : 1];
    c->n = rsz[lead];
    c->k = (tr ? batch2 : batch1)->shape[lead];
    c->a_op = tr ? 1 : 0;
    c->clone_a = prepare_batch(tr ? batch2 : batch1, tr, c->m, c->k, &c->transa, &c->lda, &a);
    c->clone_b = prepare_batch(tr ? batch1 : batch2, tr, c->k, c->n, &c->transb, &c->ldb, &b);
    c->ldc = rst[lead];
    c->batch = rsz[0];
    c->stridea = a.strides[0];
    c->strideb = b.strides[0];
    c->stridec = rst[0];
    c->a_off = a.offset;
    c->b_off = b.offset;
    c->alpha = opmath(dt, alpha);
    c->beta = opmath(dt, beta);
    /* num_batches == 1: at::cuda::blas::gemm, else bgemm */
    c->batched = c->batch > 1;
    c->api = s->lib == BP_BLAS_CUBLASLT && !s->pedantic ? BP_GEMM_LT : BP_GEMM_CUBLAS;
    adjust_ld(c);
    c->lt_fake_n2 = c->api == BP_GEMM_LT && c->n == 1 && cc_major >= 10 &&
                    (dt == BP_BF16 || dt == BP_F16) &&
                    bp_blas_rpr(s, dt) == BP_RPR_DISALLOW_NO_SPLIT;
    return bp_gemm_numerics(s, c->api, dt, c->batched, &c->num, err);
}

/* ---- names ------------------------------------------------------------------ */

const char *bp_gemm_entry_name(const bp_gemm_call_t *c)
{
    switch (c->api) {
    case BP_GEMM_NONE: return "none (empty result)";
    case BP_GEMM_ZERO: return "fill (k = 0)";
    case BP_GEMM_SCALE: return "mul (k = 0)";
    case BP_GEMM_LT: return "cublasLtMatmul";
    case BP_GEMM_LT_BIAS: return "cublasLtMatmul (bias epilogue)";
    case BP_GEMM_CUBLAS: break;
    }
    if (!c->num.typed)
        return c->batched ? "cublasGemmStridedBatchedEx" : "cublasGemmEx";
    if (c->dtype == BP_F64)
        return c->batched ? "cublasDgemmStridedBatched" : "cublasDgemm";
    return c->batched ? "cublasSgemmStridedBatched" : "cublasSgemm";
}

static const char *compute_name(bp_gemm_compute_t k)
{
    switch (k) {
    case BP_GEMM_COMPUTE_32F: return "CUBLAS_COMPUTE_32F";
    case BP_GEMM_COMPUTE_32F_FAST_TF32: return "CUBLAS_COMPUTE_32F_FAST_TF32";
    case BP_GEMM_COMPUTE_32F_PEDANTIC: return "CUBLAS_COMPUTE_32F_PEDANTIC";
    case BP_GEMM_COMPUTE_64F: return "CUBLAS_COMPUTE_64F";
    case BP_GEMM_COMPUTE_64F_PEDANTIC: return "CUBLAS_COMPUTE_64F_PEDANTIC";
    }
    return "?";
}

void bp_gemm_call_describe(const bp_gemm_call_t *c, char *out, size_t n)
{
    unsigned mm = c->num.math & 0xfu;
    snprintf(out, n,
             "%s(%c, %c, m %lld, n %lld, k %lld, lda %lld, ldb %lld, ldc %lld%s%s), "
             "%s, math %s%s%s", bp_gemm_entry_name(c), c->transa ? 'T' : 'N',
             c->transb ? 'T' : 'N', (long long)c->m, (long long)c->n, (long long)c->k,
             (long long)c->lda, (long long)c->ldb, (long long)c->ldc,
             c->batched ? ", batched" : "", c->clone_a || c->clone_b ? ", operand copied" : "",
             compute_name(c->num.compute),
             mm == BP_GEMM_MATH_TF32       ? "CUBLAS_TF32_TENSOR_OP_MATH"
             : mm == BP_GEMM_MATH_PEDANTIC ? "CUBLAS_PEDANTIC_MATH"
                                           : "CUBLAS_DEFAULT_MATH",
             c->num.math & BP_GEMM_MATH_NO_RRR ? " | DISALLOW_REDUCED_PRECISION_REDUCTION" : "",
             c->num.lt_mask ? ", reduction-scheme mask set" : "");
}
