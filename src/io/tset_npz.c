/* .npz files as tensor sets: a zip of .npy members (np.savez stores them,
 * np.savez_compressed deflates them), one tensor per member, named after
 * it without ".npy" (see zip.h for the zip's rules). */
#include "tset_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zip.h"

bp_status bp_tset_open_npz(bp_tset_t *s, size_t fi, bool as_bf16, bp_error_t *err)
{
    bp_zip_t z;
    int fd = s->f[fi].fd;
    bp_status st = bp_zip_read(fd, s->f[fi].src.ulen, s->f[fi].label, &z, err);
    if (st)
        return st;
    char *base = strdup(s->path);
    if (!base)
        st = bp_tset_oom(s->path, err);
    for (size_t i = 0; !st && i < z.n; i++) {
        const bp_zip_member_t *m = &z.m[i];
        size_t l = strlen(m->name);
        if (l <= 4 || strcmp(m->name + l - 4, ".npy") != 0) {
            st = bp_error_set(err, BP_EINPUT, "%s: member '%s' is not an .npy array (an .npz "
                              "holds only <name>.npy members)", s->f[fi].label, m->name);
            break;
        }
        bp_tsrc_t src = m->deflate
                            ? (bp_tsrc_t){BP_TF_DEFLATE, m->data_off, m->csize, m->usize}
                            : (bp_tsrc_t){BP_TF_MAP, m->data_off, m->csize, m->usize};
        char path[4200], name[4200];
        snprintf(path, sizeof path, "%s:%s", base, m->name);
        snprintf(name, sizeof name, "%.*s", (int)(l - 4), m->name);
        size_t mi;
        if ((st = bp_tset_add_file(s, fd, true, path, &src, &mi, err)))
            break;
        s->f[mi].zip_member = true;
        s->f[mi].zip_crc = m->crc;
        st = bp_tset_add_npy(s, mi, name, as_bf16, err);
    }
    free(base);
    bp_zip_free(&z);
    return st;
}
