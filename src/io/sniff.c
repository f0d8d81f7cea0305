/* File kinds from magic bytes and, for text, from its first lines (see
 * sniff.h).  Binary magics decide first; text is JSON when it opens with
 * '{' or '[', YAML when it opens with a document marker, a comment or a
 * "key:" line. */
#include "sniff.h"

#include <stdbool.h>
#include <string.h>

#include "st.h"

static bool starts(const unsigned char *h, size_t n, const char *m, size_t k)
{
    return n >= k && memcmp(h, m, k) == 0;
}

static bool texty(const unsigned char *h, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (h[i] < 0x20 && h[i] != '\n' && h[i] != '\r' && h[i] != '\t')
            return false;
    return true;
}

/* A first non-comment line of the form "key:" or "key: value". */
static bool yamlish(const unsigned char *h, size_t n)
{
    size_t i = 0;
    while (i < n) {
        while (i < n && (h[i] == ' ' || h[i] == '\n' || h[i] == '\r'))
            i++;
        if (i < n && h[i] == '#') {
            while (i < n && h[i] != '\n')
                i++;
            continue;
        }
        break;
    }
    if (starts(h + i, n - i, "---", 3))
        return true;
    size_t k = i;
    while (k < n && (h[k] == '_' || h[k] == '-' || h[k] == '.' ||
                     (h[k] >= '0' && h[k] <= '9') || ((h[k] | 0x20) >= 'a' && (h[k] | 0x20) <= 'z')))
        k++;
    return k > i && k < n && h[k] == ':' && (k + 1 == n || h[k + 1] == ' ' ||
                                            h[k + 1] == '\n' || h[k + 1] == '\r');
}

/* torch.save's zip (PyTorch 1.6 on) opens with "<archive>/data.pkl": the
 * first local header's name (length at byte 26, name at byte 30). */
static bool torch_zip(const unsigned char *h, size_t n)
{
    if (n < 30)
        return false;
    size_t len = (size_t)h[26] | (size_t)h[27] << 8;
    static const char pkl[] = "data.pkl";
    size_t k = sizeof pkl - 1;
    if (len < k || 30 + len > n || memcmp(h + 30 + len - k, pkl, k) != 0)
        return false;
    return len == k || h[30 + len - k - 1] == '/';
}

bp_sniff_t bp_sniff(const unsigned char *h, size_t n, uint64_t size)
{
    if (n == 0)
        return BP_SNIFF_EMPTY;
    if (starts(h, n, "\x1f\x8b", 2))
        return BP_SNIFF_GZIP;
    if (starts(h, n, "PK\x03\x04", 4) && torch_zip(h, n))
        return BP_SNIFF_TORCH;
    if (starts(h, n, "PK\x03\x04", 4) || starts(h, n, "PK\x05\x06", 4))
        return BP_SNIFF_ZIP;
    if (starts(h, n, "\x93NUMPY", 6))
        return BP_SNIFF_NPY;
    if (starts(h, n, "\x89HDF\r\n\x1a\n", 8))
        return BP_SNIFF_HDF5;
    if (n >= 9 && h[8] == '{') {
        uint64_t len = 0;
        for (int i = 7; i >= 0; i--)
            len = len << 8 | h[i];
        if (len <= BP_ST_MAX_HEADER && (size == UINT64_MAX || 8 + len <= size))
            return BP_SNIFF_SAFETENSORS;
    }
    if (h[0] == 0x80 && n >= 2 && h[1] >= 2 && h[1] <= 5)
        return BP_SNIFF_PICKLE;
    size_t i = 0;
    if (starts(h, n, "\xef\xbb\xbf", 3))
        i = 3; /* a UTF-8 byte order mark */
    if (!texty(h + i, n - i))
        return BP_SNIFF_OTHER;
    while (i < n && (h[i] == ' ' || h[i] == '\t' || h[i] == '\n' || h[i] == '\r'))
        i++;
    if (i < n && (h[i] == '{' || h[i] == '['))
        return BP_SNIFF_JSON;
    return yamlish(h, n) ? BP_SNIFF_YAML : BP_SNIFF_TEXT;
}

const char *bp_sniff_name(bp_sniff_t k)
{
    switch (k) {
    case BP_SNIFF_SAFETENSORS: return "safetensors";
    case BP_SNIFF_GZIP: return "gzip";
    case BP_SNIFF_ZIP: return "zip (an .npz or a torch.save archive)";
    case BP_SNIFF_TORCH: return "a torch.save archive (pickled tensors)";
    case BP_SNIFF_NPY: return "an .npy array";
    case BP_SNIFF_JSON: return "JSON";
    case BP_SNIFF_YAML: return "YAML";
    case BP_SNIFF_HDF5: return "HDF5";
    case BP_SNIFF_PICKLE: return "a Python pickle";
    case BP_SNIFF_TEXT: return "text";
    case BP_SNIFF_EMPTY: return "an empty file";
    default: return "binary data of no format bitprobe knows";
    }
}
