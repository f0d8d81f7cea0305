/* The options run and bless share (see runopts.h). */
#include "runopts.h"

#include <stdio.h>
#include <string.h>

#include "opt.h"

void bp_run_opts_init(bp_run_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->dev.list = "auto";
    o->dtypes = BP_DTYPES_RUN;
    o->golden = true;
    o->repeat = 1;
    bp_backend_opts_default(&o->dev.be);
    bp_cmp_opts_init(&o->cmp);
    bp_rep_targets_init(&o->out);
}

int bp_run_param_entry(const char *cmd, const bp_opt_t *e, const char *arg, void *ctx)
{
    (void)ctx;
    bp_run_opts_t *o = e->target;
    return bp_cli_param_arg(cmd, arg, o->params, o->param_names, &o->nparams,
                            BP_RUN_MAX_PARAMS);
}

/* Appends " ARG", quoted for a shell when it needs it. */
static void append_arg(char *out, size_t n, size_t *len, const char *arg)
{
    if (*len + 1 >= n)
        return;
    out[(*len)++] = ' ';
    *len += bp_report_shell_word(arg, out + *len, n - *len);
    if (*len >= n)
        *len = n - 1;
}

void bp_run_hint(const bp_run_opts_t *o, const char *cmd, const char *const *probes,
                 size_t nprobes, const char *device, uint32_t dtypes, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    int k = snprintf(out, n, "bitprobe %s", cmd);
    len = k > 0 && (size_t)k < n ? (size_t)k : 0;
    for (size_t i = 0; i < nprobes; i++)
        append_arg(out, n, &len, probes[i]);
    if (device) {
        append_arg(out, n, &len, "--device");
        append_arg(out, n, &len, device);
    }
    if (dtypes) {
        char list[64] = "";
        size_t l = 0;
        for (int d = 0; d < BP_NDTYPES; d++)
            if (dtypes & (1u << d))
                l += (size_t)snprintf(list + l, l < sizeof list ? sizeof list - l : 0, "%s%s",
                                      l ? "," : "", bp_dtype_name((bp_dtype_t)d));
        append_arg(out, n, &len, "--dtype");
        append_arg(out, n, &len, list);
    }
    /* the backend options that make the backends' keys (and goldens) */
    bp_backend_opts_t def;
    bp_backend_opts_default(&def);
    const bp_backend_opts_t *be = &o->dev.be;
    if (be->cpu_math != def.cpu_math) {
        append_arg(out, n, &len, "--cpu-math");
        append_arg(out, n, &len, bp_cpu_math_name(be->cpu_math));
    }
    if (be->cpu_isa != def.cpu_isa) {
        append_arg(out, n, &len, "--cpu-isa");
        append_arg(out, n, &len, bp_cpu_isa_name(be->cpu_isa));
    }
    if (be->onednn_isa != def.onednn_isa) {
        append_arg(out, n, &len, "--onednn-isa");
        append_arg(out, n, &len, bp_onednn_isa_name(be->onednn_isa));
    }
    if (be->mkl_isa != def.mkl_isa) {
        append_arg(out, n, &len, "--mkl-isa");
        append_arg(out, n, &len, bp_mkl_isa_name(be->mkl_isa));
    }
    if (be->gpus || be->gpu != def.gpu) {
        char g[32];
        snprintf(g, sizeof g, "%d", be->gpu);
        append_arg(out, n, &len, "--gpu");
        append_arg(out, n, &len, be->gpus ? be->gpus : g);
    }
    if (be->cuda_blas[0]) {
        append_arg(out, n, &len, "--cuda-blas");
        append_arg(out, n, &len, be->cuda_blas);
    }
    if (o->probes_dir) {
        append_arg(out, n, &len, "--probes");
        append_arg(out, n, &len, o->probes_dir);
    }
    if (o->golden_dir) {
        append_arg(out, n, &len, "--golden");
        append_arg(out, n, &len, o->golden_dir);
    }
    for (size_t i = 0; i < o->nparams; i++) {
        char kv[256];
        snprintf(kv, sizeof kv, "%s=%s", o->params[i].name, o->params[i].value);
        append_arg(out, n, &len, "--param");
        append_arg(out, n, &len, kv);
    }
}
