"""A probe's YAML as the replay needs it: a spec dict (name, dtypes, ops,
outputs) with every `$param` replaced by its number, numbers read as
bitprobe reads them.  PyYAML speaks YAML 1.1, so a float without a dot
(1e-6) would come back as a string: the YAML 1.2 float forms and C99 hex
floats (0x1.8p+3) are resolved here as bitprobe's loader resolves them."""
import re

import yaml

_FLOAT12 = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_HEXF = re.compile(r"^[-+]?0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*([pP][-+]?[0-9]+)?$")


class _Loader(yaml.SafeLoader):
    pass


def _scalar(loader, node):
    v = loader.construct_scalar(node)
    if node.style:  # quoted: a string
        return v
    if re.fullmatch(r"[-+]?[0-9]+", v):
        return int(v)
    if _FLOAT12.match(v):
        return float(v)
    if _HEXF.match(v) and ("." in v or "p" in v.lower()):
        return float.fromhex(v)
    if re.fullmatch(r"[-+]?0[xX][0-9a-fA-F]+", v):
        return int(v, 16)
    low = v.lower()
    if low in (".inf", "+.inf", "-.inf", ".nan"):
        return float(low.replace(".", ""))
    if low in ("true", "false"):
        return low == "true"
    return v


_Loader.add_constructor("tag:yaml.org,2002:str", _scalar)
_Loader.add_constructor("tag:yaml.org,2002:int", _scalar)
_Loader.add_constructor("tag:yaml.org,2002:float", _scalar)
_Loader.add_constructor("tag:yaml.org,2002:bool", _scalar)


def _subst(v, params):
    if isinstance(v, str) and v.startswith("$") and v != "$dtype":
        return params[v[1:]]
    if isinstance(v, list):
        return [_subst(x, params) for x in v]
    return v


def load(path):
    with open(path) as f:
        doc = yaml.load(f, Loader=_Loader)
    params = doc.get("params") or {}
    ops = [{k: (str(v).lower() if k == "formulation" and isinstance(v, bool) else
                _subst(v, params)) for k, v in op.items()} for op in doc["ops"]]
    return {"name": doc["name"], "description": doc.get("description", ""),
            "dtypes": list(doc["dtypes"]), "ops": ops,
            "outputs": [o["name"] for o in doc["outputs"]]}
