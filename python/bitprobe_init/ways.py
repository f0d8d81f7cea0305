"""The ways users build a model, what each changes around construction, and
where each can run.

  cpu         the reference: on the CPU, default dtype fp32
  cpu-bf16    on the CPU with the model dtype as default dtype, as
              from_pretrained(torch_dtype=...) and torch.set_default_dtype do
  cuda        constructed on the GPU (torch.device("cuda") as the default
              device, as device_map/device= do), fp32
  meta        constructed on the meta device, then to_empty() and the
              re-initialisation the model's code offers: --reinit, else
              model.init_weights() (torchtitan, transformers), else every
              module's reset_parameters() (what FSDP's meta path calls)
  zero-init   inside DeepSpeed's zero.Init(dtype=...) when DeepSpeed imports;
              otherwise its constructor wrappers reproduced exactly
              (deepspeed/runtime/zero/partition_parameters.py,
              zero_wrapper_for_fp_tensor_constructor): torch.tensor, empty,
              zeros, ones, full, arange, eye and randn put their result on the
              local device when no device is given, and a floating result is
              cast to the ZeRO dtype at once (tensor.data = tensor.data.to(
              dtype)); integer results are untouched; Tensor.__new__ as
              get_new_tensor_fn_for_dtype makes it
  fsdp2-meta  torchtitan's recipe: meta, fully_shard (FSDP2) per layer list
              entry and on the root, to_empty(), re-initialisation

Each runs in a fresh process (build.py); this module holds no state between
ways."""
import contextlib
import importlib.util
import os
import socket

WAYS = ("cpu", "cpu-bf16", "cuda", "meta", "zero-init", "fsdp2-meta")
REFERENCE = "cpu"
TO_EMPTY = ("meta", "fsdp2-meta")  # ways that take memory from to_empty()

DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}


def torch_dtype(name):
    import torch
    return getattr(torch, DTYPES[name])


def has_device_context(torch):
    return hasattr(torch.device("cpu"), "__enter__")


def _fully_shard():
    try:
        from torch.distributed.fsdp import fully_shard
        return fully_shard
    except ImportError:
        from torch.distributed._composable.fsdp import fully_shard
        return fully_shard


def local_device(torch):
    """The device zero.Init uses: the accelerator of LOCAL_RANK (the CPU
    where there is none, as DeepSpeed's CPU accelerator says)."""
    if torch.cuda.is_available():
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    return torch.device("cpu")


def availability(way, torch):
    """(runs here, why not / how) for a way; checked without importing
    DeepSpeed (slow) or touching a GPU beyond torch.cuda.is_available()."""
    if way in ("cpu", "cpu-bf16"):
        return True, None
    if way == "cuda":
        if not torch.cuda.is_available():
            return False, ("this PyTorch has no CUDA" if not torch.backends.cuda.is_built()
                           else "no CUDA device")
        return True, None
    if way == "meta":
        if has_device_context(torch):
            return True, None
        return True, ("PyTorch %s: factory calls put on meta by a TorchFunctionMode" %
                      torch.__version__.split("+")[0])
    if way == "zero-init":
        if importlib.util.find_spec("deepspeed") is not None:
            return True, "DeepSpeed's zero.Init"
        return True, "emulated: DeepSpeed is not installed"
    if way == "fsdp2-meta":
        if not torch.distributed.is_available():
            return False, "this PyTorch has no torch.distributed"
        ver = torch.__version__.split("+")[0]
        try:
            major, minor = (int(x) for x in ver.split(".")[:2])
        except ValueError:
            major, minor = 0, 0
        if (major, minor) < (2, 4):
            return False, "PyTorch %s has no FSDP2 (fully_shard, PyTorch 2.4 and later)" % ver
        try:
            _fully_shard()
        except Exception as e:
            return False, "FSDP2's fully_shard does not import: %s" % (
                str(e).splitlines() or [type(e).__name__])[0][:160]
        if not has_device_context(torch):
            return False, "no torch.device context manager"
        return True, None
    return False, "unknown way"


def describe(way, dtype):
    return {
        "cpu": "on the CPU in fp32, the reference",
        "cpu-bf16": "on the CPU with default dtype %s" % dtype,
        "cuda": "on the GPU (default device cuda) in fp32",
        "meta": "on meta, then to_empty() and re-initialisation",
        "zero-init": "inside zero.Init (dtype %s)" % dtype,
        "fsdp2-meta": "on meta, fully_shard (FSDP2), to_empty() and re-initialisation",
    }[way]


# --- the default device ---------------------------------------------------

_FACTORIES = ("empty", "zeros", "ones", "full", "arange", "tensor", "eye", "randn", "rand",
              "randint", "linspace", "logspace", "empty_strided", "zeros_like", "ones_like",
              "empty_like", "full_like", "rand_like", "randn_like", "as_tensor", "range",
              "randperm", "normal", "scalar_tensor")


def _device_mode(torch, dev):
    """torch.device(dev) as a context manager, for PyTorch without one: a
    TorchFunctionMode giving factory calls dev where they name no device
    (what torch/utils/_device.py does in PyTorch 2)."""
    from torch.overrides import TorchFunctionMode
    funcs = {getattr(torch, n) for n in _FACTORIES if hasattr(torch, n)}

    class DeviceMode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func in funcs and kwargs.get("device") is None:
                kwargs["device"] = dev
            return func(*args, **kwargs)

    return DeviceMode()


def device_context(torch, dev):
    if has_device_context(torch):
        return torch.device(dev)
    return _device_mode(torch, dev)


# --- zero.Init ------------------------------------------------------------

ZERO_WRAPPED = ("tensor", "empty", "zeros", "ones", "full", "arange", "eye", "randn")


class ZeroInitEmulation:
    """zero.Init's tensor overrides (dtype and device), as DeepSpeed installs
    them in InsertPostInitMethodToModuleSubClasses._add_tensor_creation_wrappers.
    Parameters are neither partitioned nor gathered: their values are the
    same either way."""

    def __init__(self, torch, dtype, device):
        self.torch, self.dtype, self.device = torch, dtype, device
        self.orig = {}
        self.orig_new = None

    def _wrapper(self, fn):
        dtype, device = self.dtype, self.device

        def wrapped_fn(*args, **kwargs):
            if kwargs.get("device", None) is None and device is not None:
                kwargs["device"] = device
            tensor = fn(*args, **kwargs)
            if dtype is not None and tensor.is_floating_point():
                tensor.data = tensor.data.to(dtype)
            return tensor

        return wrapped_fn

    def __enter__(self):
        torch = self.torch
        for n in ZERO_WRAPPED:
            self.orig[n] = getattr(torch, n)
        empty = self.orig["empty"]
        dtype, device = self.dtype, self.device

        def new_tensor(cls, *args, **kwargs):
            if not args:
                args = (0,)
            if device is None:
                tensor = empty(0).new_empty(*args, **kwargs)
            else:
                tensor = empty(0, device=device).new_empty(*args, **kwargs)
            if tensor.is_floating_point() and dtype is not None:
                tensor = tensor.to(dtype)
            return tensor

        self.orig_new = torch.Tensor.__new__
        torch.Tensor.__new__ = new_tensor
        for n in ZERO_WRAPPED:
            setattr(torch, n, self._wrapper(self.orig[n]))
        return self

    def __exit__(self, *exc):
        torch = self.torch
        torch.Tensor.__new__ = self.orig_new
        for n, fn in self.orig.items():
            setattr(torch, n, fn)
        return False


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _single_rank_env():
    for k, v in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"),
                 ("LOCAL_WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1")):
        os.environ.setdefault(k, v)
    os.environ.setdefault("MASTER_PORT", str(_free_port()))


def deepspeed_context(torch, dtype):
    import deepspeed
    _single_rank_env()
    deepspeed.init_distributed(dist_backend="nccl" if torch.cuda.is_available() else "gloo",
                               verbose=False)
    cfg = {"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3},
           "bf16": {"enabled": dtype == torch.bfloat16},
           "fp16": {"enabled": dtype == torch.float16}}
    return deepspeed.zero.Init(config_dict_or_path=cfg, dtype=dtype), deepspeed.__version__


# --- parameters on meta (buffers only) --------------------------------------

@contextlib.contextmanager
def params_on_meta(torch):
    """Every parameter moved to meta as it is registered (accelerate's
    init_empty_weights(include_buffers=False)): buffers are built for real,
    parameters cost nothing."""
    Module = torch.nn.Module
    orig = Module.register_parameter

    def register(self, name, param):
        orig(self, name, param)
        p = self._parameters.get(name)
        if p is not None and p.device.type != "meta":
            # made from the shape alone (empty_strided: no op reads the values
            # dropped, and zero.Init does not wrap it)
            m = torch.empty_strided(tuple(p.shape), tuple(p.stride()), dtype=p.dtype,
                                    device="meta")
            self._parameters[name] = type(p)(m, requires_grad=p.requires_grad)

    Module.register_parameter = register
    try:
        yield
    finally:
        Module.register_parameter = orig


def to_empty(torch, model, device, buffers_only):
    """model.to_empty(device=device); buffers only: the parameters stay on
    meta, every buffer gets what to_empty() gives it."""
    if not buffers_only:
        return model.to_empty(device=device)
    # Each buffer replaced as to_empty()'s _apply replaces it; the parameters
    # are not touched at all (an _apply that hands a parameter back
    # unchanged fails where swapping is on, as FSDP2 sets it: "Couldn't
    # swap").
    for m in model.modules():
        for name, b in list(m._buffers.items()):
            if b is not None:
                m._buffers[name] = torch.empty_like(b, device=device)
    return model


def reinit(model, user_fn=None, user_name=None):
    """The re-initialisation after to_empty(); returns what ran."""
    if user_fn is not None:
        user_fn(model)
        return "%s(model) (--reinit)" % user_name
    f = getattr(model, "init_weights", None)
    if callable(f):
        f()
        return "%s.init_weights()" % type(model).__name__
    mods = [m for m in model.modules() if callable(getattr(m, "reset_parameters", None))]
    for m in mods:
        m.reset_parameters()
    return "reset_parameters() of %d modules" % len(mods)


def fsdp2_setup(torch):
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    _single_rank_env()
    cuda = torch.cuda.is_available()
    if not dist.is_initialized():
        dist.init_process_group("nccl" if cuda else "gloo",
                                init_method="tcp://127.0.0.1:%s" % os.environ["MASTER_PORT"],
                                rank=0, world_size=1)
    return init_device_mesh("cuda" if cuda else "cpu", (1,))


def fsdp2_shard(torch, model, mesh):
    fully_shard = _fully_shard()
    n = 0
    for m in list(model.modules()):
        if isinstance(m, torch.nn.ModuleList):
            for layer in m:
                fully_shard(layer, mesh=mesh)
                n += 1
    fully_shard(model, mesh=mesh)
    return n + 1
