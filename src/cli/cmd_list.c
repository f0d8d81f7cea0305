/* bitprobe list: the probes found and the backends with their availability;
 * with --ops, the ops a probe can use, from the op table (op_list.h). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cli.h"
#include "esc.h"
#include "opt.h"
#include "probe.h"

const char cmd_list_usage[] =
    "bitprobe list [--probes DIR] [--param NAME=VALUE] [--ops] [--json]";

typedef struct {
    bp_param_arg_t params[32];
    char names[32][BP_CLI_PARAM_NAME];
    size_t n;
} params_t;

static int list_param(const char *cmd, const bp_opt_t *e, const char *arg, void *ctx)
{
    (void)e;
    params_t *p = ctx;
    return bp_cli_param_arg(cmd, arg, p->params, p->names, &p->n,
                            sizeof p->params / sizeof p->params[0]);
}

static void dtypes_str(uint32_t mask, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (int d = 0; d < BP_NDTYPES; d++)
        if (mask & (1u << d))
            len += (size_t)snprintf(out + len, len < n ? n - len : 0, "%s%s",
                                    len ? "," : "", bp_dtype_name((bp_dtype_t)d));
}

static void outputs_str(const bp_probe_t *p, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < p->noutputs; i++)
        len += (size_t)snprintf(out + len, len < n ? n - len : 0, "%s%s",
                                i ? "," : "", p->outputs[i].name);
}

/* Opens each backend to learn whether it runs here, and why not. */
static json_t *backends_json(void)
{
    json_t *arr = json_array();
    for (const char *const *name = bp_backend_names(); *name; name++) {
        bp_backend_t *be = NULL;
        bp_error_t err = {0};
        bp_status st = bp_backend_open(*name, NULL, &be, &err);
        json_t *o = json_pack("{s:s, s:b}", "name", *name, "available", st == BP_OK);
        if (st == BP_OK)
            json_object_set_new(o, "key", json_string(be->key));
        else
            json_object_set_new(o, "reason", json_string(err.msg));
        json_array_append_new(arr, o);
        bp_backend_close(be);
    }
    return arr;
}

/* The type a key's value takes in op k (a and b take numbers too where
 * the op says so). */
static const char *key_type(bp_op_kind_t k, bp_key_t key)
{
    bp_opd_t o = bp_op_info(k)->operands;
    if ((key == BP_KEY_A || key == BP_KEY_B) && (o == BP_OPD_AB_TS || o == BP_OPD_COND_AB))
        return "buffer|number";
    return bp_key_type_name(bp_key_type(key));
}

static json_t *op_json(bp_op_kind_t k)
{
    const bp_op_info_t *in = bp_op_info(k);
    json_t *keys = json_array(), *forms = json_array(), *flags = json_array(),
           *bes = json_array();
    for (int i = 0; i < BP_KEY_COUNT; i++)
        if (in->keys & (UINT64_C(1) << i))
            json_array_append_new(
                keys, json_pack("{s:s, s:s, s:b}", "name", bp_key_name((bp_key_t)i),
                                "type", key_type(k, (bp_key_t)i), "required",
                                (in->required & (UINT64_C(1) << i)) != 0));
    for (int f = 0; f < BP_FORM_COUNT; f++)
        if (in->forms & (1u << f))
            json_array_append_new(forms, json_string(bp_form_name((bp_form_t)f)));
    for (int b = 0; b < BP_OPF_NFLAGS; b++)
        if (in->flags & (1u << b))
            json_array_append_new(flags, json_string(bp_op_flag_name(b)));
    for (const char *const *name = bp_backend_names(); *name; name++) {
        const bp_op_fn *t = bp_backend_ops(*name);
        if (t && t[k] && t[k] != bp_op_unsupported)
            json_array_append_new(bes, json_string(*name));
    }
    return json_pack("{s:s, s:s, s:s, s:o, s:o, s:s, s:o, s:o, s:s}", "name", in->name,
                     "kind", bp_op_class_name(in->kind), "operands",
                     bp_opd_name(in->operands), "keys", keys, "formulations", forms,
                     "dtype_rule", bp_dtype_rule_name(in->dtype), "flags", flags,
                     "backends", bes, "torch", in->torch);
}

/* "a:T|S [axis] [formulation=sequential|pairwise]": what a probe writes. */
static void op_signature(bp_op_kind_t k, char *out, size_t n)
{
    const bp_op_info_t *in = bp_op_info(k);
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < BP_KEY_COUNT; i++) {
        uint64_t bit = UINT64_C(1) << i;
        if (!(in->keys & bit) || (i == BP_KEY_DTYPE && !(in->required & bit)))
            continue;
        bool req = in->required & bit;
        char val[96] = "";
        if ((i == BP_KEY_A || i == BP_KEY_B) &&
            (in->operands == BP_OPD_AB_TS || in->operands == BP_OPD_COND_AB))
            snprintf(val, sizeof val, ":T|S");
        else if (i == BP_KEY_FORMULATION) {
            size_t vl = 0;
            for (int f = 0; f < BP_FORM_COUNT; f++)
                if (in->forms & (1u << f))
                    vl += (size_t)snprintf(val + vl, vl < sizeof val ? sizeof val - vl : 0,
                                           "%s%s", vl ? "|" : "=", bp_form_name((bp_form_t)f));
        }
        len += (size_t)snprintf(out + len, len < n ? n - len : 0, "%s%s%s%s%s",
                                len ? " " : "", req ? "" : "[", bp_key_name((bp_key_t)i),
                                val, req ? "" : "]");
    }
}

/* Every op, from the op table: one line each, or every fact in JSON. */
static int list_ops(bool as_json)
{
    if (as_json) {
        json_t *arr = json_array();
        for (int k = 0; k < BP_OP_COUNT; k++)
            json_array_append_new(arr, op_json((bp_op_kind_t)k));
        json_t *root = json_pack("{s:o}", "ops", arr);
        char *s = json_dumps(root, JSON_INDENT(2));
        if (s)
            puts(s);
        free(s);
        json_decref(root);
        return BP_EXIT_OK;
    }
    printf("Ops (%d):\n", (int)BP_OP_COUNT);
    char sig[256], miss[64];
    for (int k = 0; k < BP_OP_COUNT; k++) {
        const bp_op_info_t *in = bp_op_info((bp_op_kind_t)k);
        op_signature((bp_op_kind_t)k, sig, sizeof sig);
        size_t ml = 0;
        miss[0] = '\0';
        for (const char *const *name = bp_backend_names(); *name; name++) {
            const bp_op_fn *t = bp_backend_ops(*name);
            if (t && (!t[k] || t[k] == bp_op_unsupported))
                ml += (size_t)snprintf(miss + ml, ml < sizeof miss ? sizeof miss - ml : 0,
                                       "%s%s", ml ? ", " : " (not on ", *name);
        }
        if (ml)
            snprintf(miss + ml, ml < sizeof miss ? sizeof miss - ml : 0, ")");
        printf("  %-12s %-12s %-44s %s%s\n", in->name, bp_op_class_name(in->kind), sig,
               in->torch, miss);
    }
    printf("\nKeys in [] are optional; every op also takes dtype (the result dtype).\n"
           "T|S: a buffer or a number. 'bitprobe list --ops --json' gives key types,\n"
           "dtype rules, flags and the backends that compute each op.\n");
    return BP_EXIT_OK;
}

int cmd_list(int argc, char **argv)
{
    const char *dir_opt = NULL;
    bool as_json = false, ops = false;
    params_t pa = {.n = 0};
    const bp_opt_t opts[] = {
        BP_OPT_STRING_("probes", 0, &dir_opt,
           "  --probes DIR   read probes from DIR (default: ./probes, then the installed set)\n"),
        BP_OPT_CALL_("param", 0, true, list_param, 0,
           "  --param NAME=VALUE  list the probes with parameter NAME replaced (repeatable):\n"
           "                 their hashes as run and bless would see them\n"),
        BP_OPT_FLAG_("ops", 0, &ops,
           "  --ops          list the ops a probe can use instead: keys, kind, PyTorch meaning\n"),
        BP_OPT_FLAG_("json", 0, &as_json,
           "  --json         machine-readable listing (with --ops: every fact about each op)\n"),
        BP_OPT_END_};
    int pos, prc;
    if ((prc = bp_opt_parse("list", opts, &pa, argc, argv, &pos)))
        return prc < 0 ? BP_EXIT_OK : prc;
    if (pos < argc)
        return bp_cli_usage_error("list", "unexpected argument '%s'", argv[pos]);
    bp_param_arg_t *params = pa.params;
    size_t nparams = pa.n;
    if (ops && (dir_opt || nparams))
        return bp_cli_usage_error("list", "--ops lists the ops bitprobe knows; it reads "
                                  "no probes (drop --probes and --param)");
    if (ops)
        return list_ops(as_json);
    const char *dir = bp_cli_probes_dir(dir_opt);
    bp_cli_probes_t pr;
    bp_error_t err = {0};
    int rc = bp_cli_probes_load("list", dir_opt, params, nparams, NULL, 0, &pr);
    bp_probe_t **ps = pr.all;
    size_t n = pr.nall;
    if (!rc && n && bp_probe_params_check(ps, n, params, nparams, &err))
        rc = bp_cli_fail(&err);
    if (rc) {
        bp_cli_probes_free(&pr);
        return rc;
    }
    json_t *bes = backends_json();
    char dts[64], outs[512];
    if (as_json) {
        json_t *root = json_pack("{s:s, s:[], s:o, s:[]}", "probes_dir", dir, "probes",
                                 "backends", bes, "errors");
        for (size_t i = 0; i < pr.nbad; i++)
            json_array_append_new(json_object_get(root, "errors"),
                                  json_pack("{s:s, s:s}", "file", pr.bad[i].path, "message",
                                            pr.bad[i].msg));
        json_t *arr = json_object_get(root, "probes");
        for (size_t i = 0; i < n; i++) {
            json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:[], s:[]}", "name", ps[i]->name,
                                  "description", ps[i]->description, "file", ps[i]->path,
                                  "hash", ps[i]->hash, "outputs", "dtypes");
            if (ps[i]->overrides)
                json_object_set_new(o, "param_overrides", json_string(ps[i]->overrides));
            for (size_t k = 0; k < ps[i]->noutputs; k++)
                json_array_append_new(json_object_get(o, "outputs"),
                                      json_string(ps[i]->outputs[k].name));
            for (int d = 0; d < BP_NDTYPES; d++)
                if (ps[i]->dtypes & (1u << d))
                    json_array_append_new(json_object_get(o, "dtypes"),
                                          json_string(bp_dtype_name((bp_dtype_t)d)));
            json_array_append_new(arr, o);
        }
        char *s = json_dumps(root, JSON_INDENT(2));
        if (s)
            puts(s);
        free(s);
        json_decref(root);
    } else {
        bp_esc_printf(stdout, "Probes in %s:\n", dir);
        for (size_t i = 0; i < n; i++) {
            dtypes_str(ps[i]->dtypes, dts, sizeof dts);
            outputs_str(ps[i], outs, sizeof outs);
            bp_esc_printf(stdout, "  %-24s %-18s %-22s %s\n", ps[i]->name, dts, outs, ps[i]->description);
            if (ps[i]->overrides)
                bp_esc_printf(stdout, "  %-24s with --param %s (hash %s)\n", "", ps[i]->overrides,
                       ps[i]->hash);
        }
        printf("\nBackends:\n");
        size_t i;
        json_t *b;
        json_array_foreach(bes, i, b) {
            json_t *key = json_object_get(b, "key");
            if (key)
                bp_esc_printf(stdout, "  %-8s available (%s)\n", json_string_value(json_object_get(b, "name")),
                       json_string_value(key));
            else
                bp_esc_printf(stdout, "  %-8s unavailable: %s\n", json_string_value(json_object_get(b, "name")),
                       json_string_value(json_object_get(b, "reason")));
        }
        json_decref(bes);
    }
    /* Files that did not load: said, and the exit status says so too. */
    for (size_t i = 0; i < pr.nbad; i++)
        bp_esc_printf(stderr, "bitprobe: %s\n", pr.bad[i].msg);
    rc = pr.nbad ? BP_EXIT_TROUBLE : BP_EXIT_OK;
    bp_cli_probes_free(&pr);
    return rc;
}
