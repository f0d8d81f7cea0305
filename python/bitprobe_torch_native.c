/* The recorder's native helper (bitprobe_torch.py loads it with ctypes
 * when it finds it; without it the recorder hashes with torch ops and
 * writes the same ledger): the ledger hash of a CPU tensor's bytes where
 * they lie, in one call instead of some fifteen torch ops.  Built by
 * `make` as python/libbitprobe_torch.so without the build's sanitizer
 * flags (the Python that loads it is not instrumented).
 *
 * The hash is ledger_fmix.h's, the one definition bitprobe's reader
 * compiles; tests/ledger_torch/native_check.py checks both paths write the
 * same ledgers. */
#include <stdint.h>

#include "ledger_fmix.h"

#define BP_TORCH_NATIVE_VERSION 1

int bp_torch_native_version(void)
{
    return BP_TORCH_NATIVE_VERSION;
}

/* H of the nbytes contiguous bytes at p. */
uint64_t bp_torch_hash(const void *p, uint64_t nbytes)
{
    return bp_ledger_hash_inline(p, (size_t)nbytes);
}

/* H of a strided tensor's bytes in the row-major order of its logical
 * shape (what .contiguous() lays out): ndim dims (at most 8), dims[0..ndim)
 * the shape and dims[ndim..2 ndim) the strides in elements (0 or negative
 * too), elsize bytes per element.  The words are assembled as the bytes
 * stream past, a row (the last dim) at a time; an element of a multiple of
 * 4 bytes starting a word is read as whole words. */
uint64_t bp_torch_hash_strided(const char *base, int64_t elsize, int ndim, const int64_t *dims)
{
    const int64_t *shape = dims, *strides = dims + (ndim > 0 ? ndim : 0);
    int64_t idx[8] = {0};
    uint64_t numel = 1;
    if (ndim < 0 || ndim > 8 || elsize <= 0)
        return 0;
    for (int d = 0; d < ndim; d++)
        numel *= (uint64_t)(shape[d] > 0 ? shape[d] : 0);
    uint64_t nbytes = numel * (uint64_t)elsize, s = 0, wi = 0;
    if (!numel)
        return bp_fmix64(0);
    const int64_t n = ndim ? shape[ndim - 1] : 1, step = ndim ? strides[ndim - 1] * elsize : 0;
    const int words = (elsize & 3) == 0; /* whole words per element */
    uint32_t w = 0;
    unsigned nb = 0;
    const char *row = base;
    for (uint64_t done = 0; done < numel; done += (uint64_t)n) {
        const char *q = row;
        for (int64_t i = 0; i < n; i++, q += step) {
            if (words && !nb) {
                for (int64_t k = 0; k < elsize; k += 4) {
                    uint32_t v;
                    memcpy(&v, q + k, 4);
                    s += bp_ledger_term(wi++, v);
                }
                continue;
            }
            for (int64_t k = 0; k < elsize; k++) {
                w |= (uint32_t)(unsigned char)q[k] << (8 * nb);
                if (++nb == 4) {
                    s += bp_ledger_term(wi++, w);
                    w = 0;
                    nb = 0;
                }
            }
        }
        /* the next row: an odometer over the other dims */
        for (int d = ndim - 2; d >= 0; d--) {
            row += strides[d] * elsize;
            if (++idx[d] < shape[d])
                break;
            row -= strides[d] * elsize * shape[d];
            idx[d] = 0;
        }
    }
    if (nb)
        s += bp_ledger_term(wi, w);
    return bp_fmix64(s + nbytes);
}
