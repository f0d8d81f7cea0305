/* Build facts of the kernel library. */
#include "bpk_common.cuh"

extern "C" int bpk_nvcc_version(void)
{
    return __CUDACC_VER_MAJOR__ * 1000 + __CUDACC_VER_MINOR__ * 10;
}
