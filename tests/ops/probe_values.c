/* What bitprobe reads in probe files, as JSON on stdout, for
 * tests/cli/probe_loader.sh to hold the Python reader
 * (tests/refs/probe_spec.py) against.  Not a test by itself.
 *
 *   probe_values FILE.yaml...   one JSON object per line per file:
 *     {"file": F, "tree": NODE, "hash": H, "ops": [{"a": S, "b": S}, ...]}
 *   probe_values --numbers      one line per line of stdin: the scalar as
 *                               a plain one, typed (below)
 *
 * NODE is the YAML tree (src/probe_yaml.c) with every scalar typed the way
 * the schema takes it: a mapping {"m": [[key, NODE], ...]}, a list
 * {"l": [NODE, ...]}, a scalar [TYPE, TEXT]: "i" or "f" (a number by
 * bp_yaml_number, an integer or not: [TYPE, VALUE in %a, TEXT]), "e" (a number beyond a
 * double), "b" (true or false as get_bool takes them: [TYPE, BOOL, TEXT]), "s" (any other
 * plain scalar), "q" (quoted or block: a string).  "hash" and "ops" come
 * from the probe loaded whole (bp_probe_load): each op's scalar operands
 * a and b as the schema holds them, $parameters resolved ("i"/"f" and
 * %a; null for a buffer or none).  A file that does not load gives
 * "error" instead of "hash" and "ops". */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"
#include "probe_yaml.h"

static json_t *typed(const char *s, bool plain)
{
    static const char *const words[] = {"true", "True", "TRUE", "false", "False", "FALSE"};
    char buf[64];
    double v;
    bool is_int;
    if (!plain)
        return json_pack("[s, s]", "q", s);
    int r = bp_yaml_number(s, &v, &is_int);
    if (r == 1) {
        snprintf(buf, sizeof buf, "%a", v);
        return json_pack("[s, s, s]", is_int ? "i" : "f", buf, s);
    }
    if (r == 2)
        return json_pack("[s, s]", "e", s);
    for (size_t k = 0; k < sizeof words / sizeof *words; k++)
        if (strcmp(s, words[k]) == 0)
            return json_pack("[s, b, s]", "b", k < 3, s);
    return json_pack("[s, s]", "s", s);
}

static json_t *tree(const bp_ynode_t *y)
{
    if (y->kind == BP_YN_SCALAR)
        return typed(y->str, y->plain);
    json_t *a = json_array();
    for (size_t i = 0; i < y->n; i++) {
        if (y->kind == BP_YN_MAP && i % 2 == 0) {
            json_array_append_new(a, json_pack("[s, o]", y->kid[i]->str, tree(y->kid[i + 1])));
            i++;
        } else {
            json_array_append_new(a, tree(y->kid[i]));
        }
    }
    return json_pack("{s:o}", y->kind == BP_YN_MAP ? "m" : "l", a);
}

static json_t *arg(const bp_arg_t *a)
{
    char buf[64];
    if (a->kind != BP_ARG_SCALAR)
        return json_null();
    snprintf(buf, sizeof buf, "%a", a->value);
    return json_pack("[s, s]", a->is_int ? "i" : "f", buf);
}

/* Prints j as one line of JSON and drops it. */
static int emit(json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(j);
    if (!s)
        return 1;
    puts(s);
    free(s);
    return 0;
}

static int one(const char *path)
{
    bp_error_t err = {0};
    bp_ynode_t *root = NULL;
    if (bp_yaml_read(path, &root, &err)) {
        fprintf(stderr, "probe_values: %s\n", err.msg);
        return 1;
    }
    json_t *o = json_pack("{s:s, s:o}", "file", path, "tree", root ? tree(root) : json_null());
    bp_yaml_free(root);
    bp_probe_t *p = NULL;
    if (bp_probe_load(path, &p, &err)) {
        json_object_set_new(o, "error", json_string(err.msg));
    } else {
        json_t *ops = json_array();
        for (size_t i = 0; i < p->nops; i++)
            json_array_append_new(ops, json_pack("{s:o, s:o}", "a", arg(&p->ops[i].a), "b",
                                                 arg(&p->ops[i].b)));
        json_object_set_new(o, "hash", json_string(p->hash));
        json_object_set_new(o, "ops", ops);
        bp_probe_free(p);
    }
    return emit(o);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--numbers") == 0) {
        char line[4096];
        while (fgets(line, sizeof line, stdin)) {
            line[strcspn(line, "\n")] = '\0';
            if (emit(typed(line, true)))
                return 1;
        }
        return 0;
    }
    if (argc < 2) {
        fputs("usage: probe_values FILE.yaml... | --numbers < LINES\n", stderr);
        return 2;
    }
    int rc = 0;
    for (int i = 1; i < argc; i++)
        rc |= one(argv[i]);
    return rc;
}
