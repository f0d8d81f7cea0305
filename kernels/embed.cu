/* Token embedding lookup on the GPU: out[t, :] = table[ids[t], :], the
 * bits copied.  The ids are checked against the table on the host. */
#include "bpk_rows.cuh"

__global__ void bpk_embedding_kernel(void *out, const void *table,
                                     const int32_t *ids, int dt, int64_t cols,
                                     int64_t n)
{
    BPK_FOR(i, n)
    {
        int64_t t = i / cols, j = i % cols;
        bpk_convert(out, dt, i, table, dt, (int64_t)ids[t] * cols + j);
    }
}

extern "C" int bpk_embedding(void *stream, void *out, const void *table,
                             const int32_t *ids, int dt, int64_t rows,
                             int64_t cols)
{
    if (!bpk_model_dt(dt) || rows < 0 || cols < 0)
        return (int)cudaErrorInvalidValue;
    int64_t n = rows * cols;
    if (n <= 0)
        return 0;
    bpk_embedding_kernel<<<bpk_blocks(n), BPK_THREADS, 0,
                           (cudaStream_t)stream>>>(out, table, ids, dt, cols,
                                                   n);
    return bpk_launched();
}
