/* The GPUs of one run compared with each other (run_consensus.h). */
#include "run_consensus.h"

#include <stdio.h>
#include <string.h>

#include "consensus.h"

/* "cuda:0, cuda:1 and cuda:3" */
static void names(const bp_cons_t *c, const bp_cons_group_t *g, char *out, size_t n)
{
    size_t len = 0;
    *out = '\0';
    for (int i = 0; i < g->n && len + 8 < n; i++)
        len += (size_t)snprintf(out + len, n - len, "%s%s",
                                i == 0 ? "" : i == g->n - 1 ? " and " : ", ",
                                bp_cons_member_at(c, g->members[i])->label);
}

bp_status bp_run_consensus(bp_run_cons_t *t, const bp_probe_t *p, size_t oi, bp_dtype_t dt,
                           bp_backend_t *const *bes, bp_buf_t *const *bufs, int n,
                           const bp_cmp_opts_t *co, bp_report_t *rep, bp_error_t *err)
{
    int slot[32], ng = 0;
    for (int k = 0; k < n && ng < 32; k++)
        if (bes[k]->inst[0])
            slot[ng++] = k;
    if (ng < 2)
        return BP_OK;
    const bp_output_t *out = &p->outputs[oi];
    bp_cons_t *c = bp_cons_new();
    bp_status rc = c ? BP_OK : bp_error_set(err, BP_ENOMEM, "out of memory");
    for (int g = 0; g < ng && !rc; g++) {
        const char *gpu = json_string_value(json_object_get(bes[slot[g]]->fingerprint, "gpu"));
        int m = bp_cons_member(c, bes[slot[g]]->name, NULL, gpu);
        rc = m < 0 ? bp_error_set(err, BP_ENOMEM, "out of memory")
                   : bp_cons_add(c, "x", m, &bufs[slot[g]][out->buf], err);
    }
    if (rc) {
        bp_cons_free(c);
        return rc;
    }
    bp_cons_settle(c);
    const bp_cons_item_t *it = bp_cons_find(c, "x");
    t->outputs++;
    if (it->ngroups > 1) {
        char who[512], odd[512] = "";
        size_t ol = 0;
        t->disagree++;
        t->split += it->majority < 0;
        const bp_cons_group_t *ref = &it->groups[it->majority >= 0 ? it->majority : 0];
        int r = slot[ref->members[0]];
        names(c, ref, who, sizeof who);
        for (int g = 0; g < it->ngroups && !rc; g++) {
            if (&it->groups[g] == ref)
                continue;
            for (int i = 0; i < it->groups[g].n && !rc; i++) {
                int k = slot[it->groups[g].members[i]];
                if (it->majority >= 0 && k < 32)
                    t->odd[k]++;
                ol += (size_t)snprintf(odd + ol, ol < sizeof odd ? sizeof odd - ol : 0, "%s%s",
                                       ol ? ", " : "", bes[k]->name);
                /* GPUs of one kind must agree; of other kinds, it is said */
                bp_result_t res = {
                    .probe = p->name, .file = p->path, .line = out->line,
                    .output = out->name, .dtype = bufs[r][out->buf].dtype, .in_run = true,
                    .run_dtype = dt, .kind = BP_RES_CROSS,
                    .a = (char *)bes[r]->name, .b = (char *)bes[k]->name,
                    .compared = true, .counts = strcmp(bes[r]->key, bes[k]->key) == 0,
                };
                bp_policy_exact(&res.policy);
                rc = bp_compare(&bufs[r][out->buf], &bufs[k][out->buf], NULL, co, &res.cmp,
                                err);
                if (!rc && !bp_report_add(rep, &res)) {
                    bp_cmp_free(&res.cmp);
                    rc = bp_error_set(err, BP_ENOMEM, "out of memory");
                }
            }
        }
        if (it->majority >= 0)
            bp_report_note(rep, "consensus %s %s %s: %s agree (%d of %d GPUs); odd one%s out: %s",
                           p->name, out->name, bp_dtype_name(dt), who, ref->n, ng,
                           ng - ref->n == 1 ? "" : "s", odd);
        else
            bp_report_note(rep, "consensus %s %s %s: no majority among %d GPUs: %s in %d "
                           "groups (the largest: %s)", p->name, out->name, bp_dtype_name(dt),
                           ng, odd, it->ngroups, who);
    }
    bp_cons_free(c);
    return rc;
}

void bp_run_consensus_note(const bp_run_cons_t *t, bp_backend_t *const *bes, int n,
                           bp_report_t *rep)
{
    if (!t->outputs)
        return;
    int ng = 0;
    for (int k = 0; k < n; k++)
        ng += bes[k]->inst[0] != '\0';
    if (!t->disagree) {
        bp_report_note(rep, "consensus of %d GPUs: bit-identical on all %zu outputs", ng,
                       t->outputs);
        return;
    }
    char odd[512] = "";
    size_t ol = 0;
    for (int k = 0; k < n && k < 32; k++)
        if (t->odd[k])
            ol += (size_t)snprintf(odd + ol, ol < sizeof odd ? sizeof odd - ol : 0,
                                   "%s%s in %zu", ol ? ", " : "", bes[k]->name, t->odd[k]);
    char split[64] = "";
    if (t->split)
        snprintf(split, sizeof split, "; %zu without a majority", t->split);
    bp_report_note(rep, "consensus of %d GPUs: %zu of %zu outputs differ%s%s%s", ng,
                   t->disagree, t->outputs, ol ? "; odd ones out: " : "", odd, split);
}
