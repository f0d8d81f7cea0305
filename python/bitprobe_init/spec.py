"""MODEL, as the user wrote it: a Hugging Face config.json, a directory
holding one, or MODULE:CALLABLE (FILE.py:CALLABLE) returning an nn.Module.

parse() only looks at the text and the files it names (no import: the
audit process checks MODEL before it starts any build); load() runs in a
build process and returns a Builder that constructs the model."""
import contextlib
import importlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile


class SpecError(Exception):
    """MODEL is not usable; the message says what and where, in one line."""


class Spec:
    def __init__(self, kind, text, config=None, module=None, attr=None):
        self.kind, self.text = kind, text      # "hf" or "callable"
        self.config = config                    # path of the config.json
        self.module, self.attr = module, attr   # callable: where and what

    def describe(self):
        if self.kind == "hf":
            return "Hugging Face config %s" % self.config
        return "%s:%s" % (self.module, self.attr)


def _read_config(path):
    try:
        with open(path, "rb") as f:
            raw = f.read(64 << 20)
    except OSError as e:
        raise SpecError("cannot read '%s': %s" % (path, e.strerror))
    try:
        d = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise SpecError("'%s': not UTF-8 (byte %d)" % (path, e.start))
    except ValueError as e:
        raise SpecError("'%s': invalid JSON: %s" % (path, e))
    if not isinstance(d, dict):
        raise SpecError("'%s': a Hugging Face config is a JSON object, not %s" %
                        (path, type(d).__name__))
    if not isinstance(d.get("model_type"), str):
        raise SpecError("'%s': not a Hugging Face config (no \"model_type\")" % path)
    return d


def parse(text):
    """The Spec MODEL names, or SpecError."""
    if not text:
        raise SpecError("MODEL is empty")
    if os.path.isdir(text):
        cfg = os.path.join(text, "config.json")
        if not os.path.isfile(cfg):
            raise SpecError("'%s': a directory without config.json" % text)
        _read_config(cfg)
        return Spec("hf", text, config=cfg)
    if os.path.isfile(text):
        _read_config(text)
        return Spec("hf", text, config=text)
    if text.endswith(".json"):
        raise SpecError("'%s': no such file" % text)
    mod, sep, attr = text.rpartition(":")
    if not sep or not mod or not attr:
        raise SpecError("'%s' is neither a config.json, a directory holding one, nor "
                        "MODULE:CALLABLE" % text)
    if not all(p.isidentifier() for p in attr.split(".")):
        raise SpecError("'%s': '%s' is not a Python name" % (text, attr))
    if mod.endswith(".py") or os.sep in mod:
        if not os.path.isfile(mod):
            raise SpecError("'%s': no such file '%s'" % (text, mod))
    elif not all(p.isidentifier() for p in mod.split(".")):
        raise SpecError("'%s': '%s' is neither a module name nor a .py file" % (text, mod))
    return Spec("callable", text, module=mod, attr=attr)


@contextlib.contextmanager
def default_dtype(dtype):
    old = None
    if dtype is not None:
        import torch
        old = torch.get_default_dtype()
        torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        if old is not None:
            import torch
            torch.set_default_dtype(old)


class Builder:
    """build(dtype) constructs the model (dtype: the default dtype during
    construction, as from_pretrained's torch_dtype sets it; None: fp32)."""

    def __init__(self, spec):
        self.spec = spec
        self.config = None       # transformers' config object (hf)
        self.config_dict = None  # the config.json as read (hf)
        self.fn = None
        self.tmp = None
        self.transformers = None
        if spec.kind == "hf":
            self._load_hf()
        else:
            self._load_callable()

    def _load_callable(self):
        s = self.spec
        name = s.module
        try:
            if name.endswith(".py") or os.sep in name:
                path = os.path.abspath(name)
                sys.path.insert(0, os.path.dirname(path))
                mname = "bitprobe_model_" + os.path.splitext(os.path.basename(path))[0]
                ms = importlib.util.spec_from_file_location(mname, path)
                mod = importlib.util.module_from_spec(ms)
                sys.modules[mname] = mod
                ms.loader.exec_module(mod)
            else:
                sys.path.insert(0, os.getcwd())
                mod = importlib.import_module(name)
        except SpecError:
            raise
        except Exception as e:
            raise SpecError("cannot import '%s': %s: %s" % (name, type(e).__name__,
                                                              str(e).splitlines()[0][:200]))
        obj = mod
        for part in s.attr.split("."):
            if not hasattr(obj, part):
                raise SpecError("'%s' has no '%s'" % (name, s.attr))
            obj = getattr(obj, part)
        if not callable(obj):
            raise SpecError("'%s' is not callable" % s.text)
        self.fn = obj

    def _load_hf(self):
        s = self.spec
        self.config_dict = _read_config(s.config)
        try:
            import transformers
        except ImportError as e:
            raise SpecError("MODEL '%s' is a Hugging Face config, and this Python cannot import "
                            "transformers (%s): install it, or name a MODULE:CALLABLE" %
                            (s.text, e))
        self.transformers = transformers
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        d = s.config
        if os.path.basename(d) != "config.json":
            # AutoConfig reads a directory's config.json: a copy under that name
            self.tmp = tempfile.mkdtemp(prefix="bitprobe-config-")
            shutil.copy(d, os.path.join(self.tmp, "config.json"))
            d = os.path.join(self.tmp, "config.json")
        try:
            self.config = transformers.AutoConfig.from_pretrained(os.path.dirname(d) or ".")
        except Exception as e:
            raise SpecError("transformers cannot read '%s': %s" % (s.config,
                                                                   str(e).splitlines()[0][:200]))
        finally:
            if self.tmp:
                shutil.rmtree(self.tmp, ignore_errors=True)
                self.tmp = None

    def _auto_class(self):
        t = self.transformers
        archs = self.config_dict.get("architectures") or []
        if any(str(a).endswith("ForCausalLM") for a in archs) or not archs:
            return t.AutoModelForCausalLM
        return t.AutoModel

    def build(self, dtype=None):
        import torch
        if self.fn is not None:
            with default_dtype(dtype):
                m = self.fn()
            if not isinstance(m, torch.nn.Module):
                raise SpecError("'%s' returned %s, not an nn.Module" % (self.spec.text,
                                                                      type(m).__name__))
            return m
        major = int(self.transformers.__version__.split(".")[0])
        kw = {"dtype" if major >= 5 else "torch_dtype": dtype or torch.float32}
        cls = self._auto_class()
        try:
            return cls.from_config(self.config, **kw)
        except ValueError:
            if cls is self.transformers.AutoModel:
                raise
            return self.transformers.AutoModel.from_config(self.config, **kw)

    def model_config(self):
        """What the config says about RoPE and sizes (plain values), or {}."""
        c = self.config
        if c is None:
            return {}
        out = {}
        for k in ("model_type", "hidden_size", "num_attention_heads", "head_dim",
                  "num_hidden_layers", "max_position_embeddings", "rope_theta",
                  "partial_rotary_factor", "rope_scaling", "rope_parameters",
                  "original_max_position_embeddings", "vocab_size", "rope_local_base_freq"):
            v = getattr(c, k, None)
            if v is None and isinstance(self.config_dict, dict):
                v = self.config_dict.get(k)
            if v is not None:
                try:
                    json.dumps(v)
                    out[k] = v
                except TypeError:
                    out[k] = repr(v)
        return out
