"""Reading and writing the reference files of tests/data/torch, for the
generators (torch_cpu_ref.py, torch_reference.py) and their comparison
(torch_compare.py), with the standard library and torch only (no
safetensors package: the format is an 8-byte little-endian header length,
a JSON header, then the raw little-endian data).

- st_write(path, {name: tensor}, meta): a safetensors file, gzip'd when
  the path ends in .gz (with mtime 0, so equal tensors give equal bytes);
- st_read(path): {name: (dtype name, shape, raw bytes)} and the metadata;
- st_tensors(path): {name: torch tensor};
- fnv1a64(dtype, raw): FNV-1a 64 of the element bytes with every NaN made
  one pattern, as tests/backends/cpu/be_cpu_ref.c's hash() (PyTorch writes 0xffff for
  a bf16 NaN where bitprobe writes 0x7fff: NaNs compare by class);
- torch_env(): the PyTorch version, build and CPU capability, for the
  files' provenance;
- torch_for_script(argv): torch under the capability a script's
  --aten-cpu-capability names, or exit 77 without it.
"""
import gzip
import io
import json
import struct

ST_DTYPES = {"F64": 8, "F32": 4, "BF16": 2, "F16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
             "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1}
# safetensors' names of torch's dtypes (fp8: PyTorch 2.1 and later).
_TORCH_ST = {"float64": "F64", "float32": "F32", "bfloat16": "BF16", "float16": "F16",
             "int64": "I64", "int32": "I32", "int16": "I16", "int8": "I8", "uint8": "U8",
             "bool": "BOOL", "float8_e4m3fn": "F8_E4M3", "float8_e5m2": "F8_E5M2"}


def _st_torch():
    """{safetensors dtype name: torch dtype} for the dtypes this torch has."""
    import torch
    return {st: getattr(torch, attr) for attr, st in _TORCH_ST.items() if hasattr(torch, attr)}
NAN_CANON = {"F64": 0x7FF8000000000000, "F32": 0x7FC00000, "BF16": 0x7FFF, "F16": 0x7FFF}
EXP_MASK = {"F64": (0x7FF0000000000000, 0x000FFFFFFFFFFFFF), "F32": (0x7F800000, 0x007FFFFF),
            "BF16": (0x7F80, 0x007F), "F16": (0x7C00, 0x03FF)}


def st_name(t):
    """The safetensors dtype name of a torch tensor."""
    return {v: k for k, v in _st_torch().items()}[t.dtype]


def raw_bytes(t):
    """The tensor's elements as little-endian bytes (bf16 included, which
    numpy cannot hold: viewed as a same-size integer first)."""
    import torch
    t = t.detach().contiguous().cpu()
    size = ST_DTYPES[st_name(t)]
    as_int = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[size]
    return t.view(as_int).numpy().astype("<i%d" % size).tobytes()


def st_bytes(tensors, meta=None):
    head, data, at = {}, [], 0
    if meta:
        head["__metadata__"] = {k: str(v) for k, v in meta.items()}
    for name in sorted(tensors):
        t = tensors[name]
        raw = raw_bytes(t)
        head[name] = {"dtype": st_name(t), "shape": list(t.shape),
                      "data_offsets": [at, at + len(raw)]}
        data.append(raw)
        at += len(raw)
    h = json.dumps(head, separators=(",", ":"), sort_keys=True).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(data)


def st_write(path, tensors, meta=None):
    out = st_bytes(tensors, meta)
    if path.endswith(".gz"):
        buf = io.BytesIO()
        with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, filename="") as f:
            f.write(out)
        out = buf.getvalue()
    with open(path, "wb") as f:
        f.write(out)


def st_read(path):
    with open(path, "rb") as f:
        raw = f.read()
    if path.endswith(".gz"):
        raw = gzip.decompress(raw)
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    meta = head.pop("__metadata__", {})
    data = raw[8 + n:]
    out = {}
    for name, t in head.items():
        b, e = t["data_offsets"]
        out[name] = (t["dtype"], tuple(t["shape"]), data[b:e])
    return out, meta


def st_tensors(path, lacking=None):
    """The file's tensors as torch tensors, {name: tensor}; a tensor of a
    dtype this torch lacks (fp8 before PyTorch 2.1) is left out and, with
    lacking (a set), its name added there."""
    import torch
    dts = _st_torch()
    out = {}
    for name, (dt, shape, raw) in st_read(path)[0].items():
        if dt not in dts and lacking is not None:
            lacking.add(name)
            continue
        t = torch.frombuffer(bytearray(raw), dtype=dts[dt]) if raw else torch.empty(0, dtype=dts[dt])
        out[name] = t.reshape(shape)
    return out


def elements(dtype, raw):
    """The element bit patterns of raw, as integers."""
    size = ST_DTYPES[dtype]
    return [int.from_bytes(raw[i:i + size], "little") for i in range(0, len(raw), size)]


def is_nan(dtype, v):
    if dtype not in EXP_MASK:
        return False
    e, m = EXP_MASK[dtype]
    return (v & e) == e and (v & m) != 0


def fnv1a64(dtype, raw):
    size = ST_DTYPES[dtype]
    h = 0xCBF29CE484222325
    for v in elements(dtype, raw):
        if is_nan(dtype, v):
            v = NAN_CANON[dtype]
        for k in range(size):
            h ^= (v >> (8 * k)) & 0xFF
            h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def torch_for_script(argv):
    """torch for a script run as a test: ATEN_CPU_CAPABILITY taken from the
    command line's --aten-cpu-capability (C or =C) before torch loads; a
    missing torch is a SKIP (exit 77)."""
    import os
    import sys
    for i, a in enumerate(argv):
        if a == "--aten-cpu-capability" and i + 1 < len(argv):
            os.environ["ATEN_CPU_CAPABILITY"] = argv[i + 1]
        elif a.startswith("--aten-cpu-capability="):
            os.environ["ATEN_CPU_CAPABILITY"] = a.split("=", 1)[1]
    try:
        import torch
    except ImportError as e:
        print(f"SKIP: {e}")
        sys.exit(77)
    return torch


def cpu_capability():
    """ATen's CPU capability in use (torch >= 2.0 says it directly; older
    builds only in their configuration text)."""
    import torch
    cpu = getattr(torch.backends, "cpu", None)
    if cpu is not None and hasattr(cpu, "get_cpu_capability"):
        return cpu.get_cpu_capability()
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage:" in line:
            return line.split(":", 1)[1].strip()
    return "unknown"


def torch_env():
    import platform
    import torch
    cfg = torch.__config__.show().splitlines()
    build = [line.strip(" -") for line in cfg if line.strip().startswith("- ")
             and not line.strip().startswith("- Build settings")]
    return {
        "torch": torch.__version__,
        "git_version": getattr(torch.version, "git_version", "unknown"),
        "build": build,
        "cpu_capability": cpu_capability(),
        "mkl": bool(torch.backends.mkl.is_available()),
        "machine": platform.machine(),
        "cpu": cpu_model(),
    }


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"
