/* Consensus among results that should agree bit for bit: the GPUs of one
 * run, or runs saved on many hosts.  Each member (a GPU, a saved run)
 * gives, per item (a probe's output in a dtype, a tensor of a bundle), the
 * bits it computed; members with the same bits form a group.  The largest
 * group (ties: the one holding the lowest member) is the majority when it
 * holds more than half of the members that have the item; every member
 * outside it is an outlier.  Without a strict majority no member is
 * called an outlier, and the item says so.
 *
 * Bits are kept as a 128-bit fingerprint of dtype, shape and bytes (two
 * independent 64-bit hashes), so that a fleet's bundles need memory in the
 * number of items, not in the data: a bundle is read one container at a
 * time.  "Identical" means identical bits: NaN payloads count.
 *
 * Bundle tensors are named "<probe>/<key>/<tensor>"; a key "<key>@<i>"
 * (several GPUs of one run, `run --gpu all --save`) makes instance i a
 * member of its own, labelled "<label>@<i>", of item "<probe>/<key>/
 * <tensor>".  What is one item across runs is decided by the caller, as
 * diff pairs two sets (tpair.h): a map from a run's tensor names to the
 * names of the items they are (cpu-libm's tensors are cpu-sleef's items
 * when the first run ran cpu-sleef). */
#ifndef BP_CONSENSUS_H
#define BP_CONSENSUS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "error.h"

typedef struct {
    uint64_t h[2];
    int *members; /* ascending */
    int n, cap;
} bp_cons_group_t;

typedef struct {
    char *name;
    bp_dtype_t dtype;
    int ndim;
    int64_t shape[BP_MAXDIM];
    bp_cons_group_t *groups; /* after bp_cons_settle: largest first */
    int ngroups, cap;
    int present;   /* members that have the item */
    int majority;  /* index into groups, or -1 */
    bool mixed;    /* members disagree on dtype or shape */
} bp_cons_item_t;

typedef struct {
    char *label;   /* as given, "@<i>" appended for an instance */
    char *path;    /* the file or directory it was read from (NULL: memory) */
    char inst[16]; /* the key's "@<i>" suffix without '@', or "" */
    json_t *about; /* backend key -> one line: GPU or CPU, driver, runtime,
                      cuBLAS, ... ("" for the member's own description) */
    json_t *names; /* item -> the member's own tensor name, where a map
                      gave the tensor another item's name; else NULL */
} bp_cons_member_t;

typedef struct bp_cons bp_cons_t;

bp_cons_t *bp_cons_new(void);
void bp_cons_free(bp_cons_t *c);

/* The member labelled `label` (created when new, with path and about
 * copied when given); -1 when out of memory. */
int bp_cons_member(bp_cons_t *c, const char *label, const char *path, const char *about);
/* What member m ran item `item` on (its backend key's line, or the
 * member's own), or "". */
const char *bp_cons_about(const bp_cons_t *c, int m, const char *item);
/* The one-line description of a container's "fingerprint" metadata. */
void bp_cons_about_of(const char *fingerprint_json, char *out, size_t n);
/* Member m's bits for item. */
bp_status bp_cons_add(bp_cons_t *c, const char *item, int m, const bp_buf_t *b,
                      bp_error_t *err);
/* Every tensor of a bundle directory, a safetensors file or a .npy file,
 * read one container at a time; members are label (and label@i).  names
 * (NULL: none) maps the path's tensor names (bundles: "<probe>/<key>/
 * <tensor>", the key with its instance) to the tensor names whose items
 * they are; a tensor it does not name is an item of its own name. */
bp_status bp_cons_add_path(bp_cons_t *c, const char *path, const char *label,
                           const json_t *names, bp_error_t *err);
/* The member's own name of item's tensor (names, else the item with the
 * member's instance put back into its key) into out. */
void bp_cons_tensor_name(const bp_cons_member_t *m, const char *item, char *out, size_t n);
/* Orders the groups and finds each item's majority (call once, after the
 * last add; adding afterwards needs another settle). */
void bp_cons_settle(bp_cons_t *c);

size_t bp_cons_nitems(const bp_cons_t *c);
const bp_cons_item_t *bp_cons_item_at(const bp_cons_t *c, size_t i);
int bp_cons_nmembers(const bp_cons_t *c);
const bp_cons_member_t *bp_cons_member_at(const bp_cons_t *c, int m);
/* The item named, or NULL. */
const bp_cons_item_t *bp_cons_find(const bp_cons_t *c, const char *item);
/* The group holding member m in item it, or -1 (m lacks the item). */
int bp_cons_group_of(const bp_cons_item_t *it, int m);
/* "5b0f3a6e91c2d7aa": the first half of a group's fingerprint. */
void bp_cons_hash_str(const bp_cons_group_t *g, char *out, size_t n);

typedef struct {
    size_t items;      /* items in all */
    size_t unanimous;  /* one group (and every member present) */
    size_t outliers;   /* a majority and at least one outlier */
    size_t split;      /* no strict majority */
    size_t partial;    /* some member lacks the item */
    size_t compared;   /* items at least two members have */
    size_t mixed;      /* dtype or shape differs between members */
} bp_cons_tally_t;
void bp_cons_tally(const bp_cons_t *c, bp_cons_tally_t *t);
/* Items where member m is an outlier. */
size_t bp_cons_outlier_count(const bp_cons_t *c, int m);

/* {"members": [...], "items": [{name, dtype, shape, present, majority,
 * groups: [{fingerprint, members: [labels]}], outliers: [labels]}] } */
json_t *bp_cons_json(const bp_cons_t *c, bool all_items);

#endif
