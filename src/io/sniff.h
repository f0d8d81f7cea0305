/* What a file looks like, from its first bytes: so that a file of the
 * wrong kind is named for what it is ("JSON, not safetensors") rather than
 * misread (a JSON file's first 8 bytes taken for a header length). */
#ifndef BP_SNIFF_H
#define BP_SNIFF_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    BP_SNIFF_SAFETENSORS, /* a plausible length field and '{' after it */
    BP_SNIFF_GZIP,
    BP_SNIFF_ZIP,         /* .npz, or another zip */
    BP_SNIFF_TORCH,       /* a zip whose first member is data.pkl: torch.save */
    BP_SNIFF_NPY,
    BP_SNIFF_JSON,
    BP_SNIFF_YAML,
    BP_SNIFF_HDF5,
    BP_SNIFF_PICKLE,
    BP_SNIFF_TEXT,
    BP_SNIFF_EMPTY,
    BP_SNIFF_OTHER
} bp_sniff_t;

/* head: the first n bytes of a file of size bytes (UINT64_MAX: unknown). */
bp_sniff_t bp_sniff(const unsigned char *head, size_t n, uint64_t size);
/* "safetensors", "gzip", "zip (an .npz or a torch.save archive)", "a
 * torch.save archive (pickled tensors)", "an .npy array", "JSON", "YAML", "HDF5", "a Python pickle", "text", "an empty
 * file", "binary data of no format bitprobe knows". */
const char *bp_sniff_name(bp_sniff_t k);

#endif
