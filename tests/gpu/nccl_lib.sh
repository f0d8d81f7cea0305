# Sourced by the multi-GPU scripts: NCCL for bitprobe (the toolkit's, else
# the one PyTorch's wheels carry, through BP_NCCL_LIB) and NVLink multicast
# kept off unless the caller asked for it (NCCL_NVLS_ENABLE: on shared
# hosts a program using multicast can put every GPU out of service).
if [ -z "${BP_NCCL_LIB:-}" ] && ! ldconfig -p 2>/dev/null | grep -q libnccl.so.2 &&
    [ ! -e "$(dirname "$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")")/lib64/libnccl.so.2" ]; then
    lib=$(python3 -c 'import os, nvidia.nccl as m; print(os.path.join(list(m.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
    [ -n "$lib" ] && [ -f "$lib" ] && export BP_NCCL_LIB="$lib" && echo "NCCL from $lib"
fi
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
