/* Internals shared by the tensor set's readers: tset.c (files, saved
 * runs), tset_ckpt.c (checkpoints), tset_npz.c (.npz).  Not for use
 * outside the tset module. */
#ifndef BP_TSET_INT_H
#define BP_TSET_INT_H

#include "st.h"
#include "tset.h"

bp_status bp_tset_oom(const char *what, bp_error_t *err);
/* Appends a file and its source: fd moved in (closed on failure), or
 * borrowed from another file of the set. */
bp_status bp_tset_add_file(bp_tset_t *s, int fd, bool borrowed, const char *path,
                           const bp_tsrc_t *src, size_t *idx, bp_error_t *err);
/* Appends a tensor named name, zeroed but for the name; NULL: out of memory. */
bp_tent_t *bp_tset_add(bp_tset_t *s, const char *name, bp_error_t *err);
/* Copies content bytes [off, off + len) into dst; *got short at the end. */
bp_status bp_tset_pull(bp_tread_t *r, uint64_t off, void *dst, size_t len, size_t *got,
                       bp_error_t *err);
/* The tensors of file fi, a safetensors content, under prefix; the
 * layout is kept in *keep when keep is not NULL. */
bp_status bp_tset_add_st(bp_tset_t *s, size_t fi, const char *prefix, bool allow_unknown,
                         bp_st_layout_t *keep, bp_error_t *err);
/* The tensor of file fi, an .npy content. */
bp_status bp_tset_add_npy(bp_tset_t *s, size_t fi, const char *name, bool as_bf16,
                          bp_error_t *err);
/* Sorts the names; two tensors of one name are an error. */
bp_status bp_tset_index(bp_tset_t *s, bp_error_t *err);

/* tset_ckpt.c */
bp_status bp_tset_open_ckpt(bp_tset_t *s, const char *index, bp_error_t *err);

/* tset_npz.c: the members of the zip in file fi. */
bp_status bp_tset_open_npz(bp_tset_t *s, size_t fi, bool as_bf16, bp_error_t *err);

#endif
