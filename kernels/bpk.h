/* The CUDA kernels' launchers, in plain C: the only interface between
 * be_cuda.c and kernels/.  Every launcher is asynchronous on the stream it
 * is given and returns the cudaError_t of its launch as an int (0: ok). */
#ifndef BPK_H
#define BPK_H

#ifdef __cplusplus
extern "C" {
#endif

/* nvcc version the kernels were built with, as major*1000 + minor*10. */
int bpk_nvcc_version(void);

#ifdef __cplusplus
}
#endif

#endif
