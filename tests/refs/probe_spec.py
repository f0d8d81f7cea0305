"""Probe files read as bitprobe reads them: the one Python reader of the
probe language, for every bench and replay that computes a probe with
PyTorch (bench/suite_torch.py, tests/refs/torch_probe.py, the fuzzer's
replay of its regressions and kept probes, fuzz_torch.py shipped).

    read(path)   the document: dicts, lists and scalars typed as below
    load(path)   a spec: name, description, dtypes, params, ops (every
                 `$name` replaced by its parameter's number), outputs (names)
    number(text) a plain scalar's number, as src/probe_yaml.c's
                 bp_yaml_number takes it

The YAML is parsed by libyaml, as bitprobe parses it (PyYAML's C parser
where it has one, its own otherwise), event by event: anchors, aliases
and tags are refused as bitprobe refuses them.  PyYAML's own typing
(YAML 1.1) is not used: it takes 0x1p-9 and 1e6 for strings, 1_000 and
0o17 for integers, `yes` for true.  Here a scalar is typed by bitprobe's
rules alone:

- quoted (or a block scalar): a string;
- plain, and a number by bp_yaml_number: an int when written without a
  fraction or exponent (42, -7, 0x1f), else a float (1.5, 1e6, .5, 1.,
  0x1.8p+3, 0x1p-9, .inf, -.Inf, .nan); an int is the double bitprobe
  holds (integers above 2**53 round as strtod rounds them); a number
  beyond a double's range is an error, as bitprobe's;
- plain true/True/TRUE, false/False/FALSE: a bool;
- anything else plain: a string (a buffer name, `$param`, a dtype).

Keys bitprobe reads as text whatever they hold (the probe's and ops'
names, dtypes, formulations: TEXT_KEYS) keep the scalar's text: the
formulation `true` of div is the string "true".

tests/cli/probe_loader.sh checks read() against bitprobe's own reading
(tests/ops/probe_values, through src/ops/probe_yaml.c) over every shipped,
regression and kept probe and a table of number spellings.
"""
import math
import re

try:
    import yaml
except ImportError:  # the caller says what is missing
    yaml = None

# Keys whose value bitprobe takes as text (src/probe_schema.c's get_str and
# get_dtype: names, dtypes, formulations).
TEXT_KEYS = frozenset(("name", "description", "op", "out", "dtype", "formulation",
                       "approximate"))
_TRUE = ("true", "True", "TRUE")
_FALSE = ("false", "False", "FALSE")
_INF = (".inf", ".Inf", ".INF")
_NAN = (".nan", ".NaN", ".NAN")
_DEC = re.compile(r"[-+]?(?P<int>[0-9]*)(?P<frac>\.[0-9]*)?(?P<exp>[eE][-+]?[0-9]+)?")
_HEX = re.compile(r"[-+]?0[xX](?P<int>[0-9a-fA-F]*)(?P<frac>\.[0-9a-fA-F]*)?"
                  r"(?P<exp>[pP][-+]?[0-9]+)?")


class ProbeError(ValueError):
    """A probe bitprobe would refuse, or that cannot be read:
    "FILE:LINE:COL: what"."""


def number(text):
    """The number a plain scalar is by bp_yaml_number: an int (written
    without fraction or exponent), a float, or None when it is no number.
    Raises OverflowError for a number beyond a double's range."""
    signed = text[:1] in ("+", "-")
    body = text[1:] if signed else text
    if body in _INF:
        return -math.inf if text[0] == "-" else math.inf
    if not signed and text in _NAN:
        return math.nan
    m = _HEX.fullmatch(text) or _DEC.fullmatch(text)
    if not m or not (m["int"] or (m["frac"] or "")[1:]):
        return None
    integer = m["frac"] is None and m["exp"] is None
    if m.re is _HEX:
        # as strtod rounds a hex integer: to the nearest double, ties to even
        v = float(int(text, 16)) if integer else float.fromhex(text)
    else:
        v = float(text)
    if math.isinf(v):
        raise OverflowError(text)
    return int(v) if integer else v


def _typed(text, plain, where):
    if not plain:
        return text
    try:
        v = number(text)
    except OverflowError:
        raise ProbeError("%s: number %s is out of range of a double" % (where, text))
    if v is not None:
        return v
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return text


def _events(text):
    loader = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader
    return yaml.parse(text, Loader=loader)


def parse(text, label="<probe>"):
    """The document of a probe's text (see read); label names it in errors."""
    if yaml is None:
        raise ProbeError("%s: reading probes needs PyYAML (python3-yaml)" % label)
    # Open containers, innermost last: [the container, the key waiting for
    # its value (mappings), whether it is the params mapping or inside it].
    stack, root, docs = [], None, 0

    def where(ev):
        return "%s:%d:%d" % (label, ev.start_mark.line + 1, ev.start_mark.column + 1)

    def add(v, ev):
        nonlocal root
        if not stack:
            root = v
            return
        top = stack[-1]
        if isinstance(top[0], list):
            top[0].append(v)
        elif top[1] is None:
            if v in top[0]:
                raise ProbeError("%s: duplicate key '%s'" % (where(ev), v))
            top[1] = v
        else:
            top[0][top[1]] = v
            top[1] = None

    def opened(c):
        top = stack[-1] if stack else None
        in_params = bool(top) and (top[2] or (len(stack) == 1 and top[1] == "params"))
        add(c, ev)
        stack.append([c, None, in_params])

    try:
        for ev in _events(text):
            kind = type(ev).__name__
            if kind == "DocumentStartEvent":
                docs += 1
                if docs > 1:
                    raise ProbeError("%s: more than one document" % where(ev))
            elif kind == "AliasEvent" or getattr(ev, "anchor", None):
                raise ProbeError("%s: anchors and aliases are not allowed" % where(ev))
            elif getattr(ev, "tag", None) is not None:
                raise ProbeError("%s: tags are not allowed" % where(ev))
            elif kind == "ScalarEvent":
                top = stack[-1] if stack else None
                if top and isinstance(top[0], dict) and (
                        top[1] is None or (top[1] in TEXT_KEYS and not top[2])):
                    add(ev.value, ev)  # a key, or a value bitprobe reads as text
                else:
                    add(_typed(ev.value, not ev.style, where(ev)), ev)
            elif kind in ("SequenceStartEvent", "MappingStartEvent"):
                if stack and isinstance(stack[-1][0], dict) and stack[-1][1] is None:
                    raise ProbeError("%s: a key must be a string" % where(ev))
                opened([] if kind == "SequenceStartEvent" else {})
            elif kind in ("SequenceEndEvent", "MappingEndEvent"):
                stack.pop()
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        pos = "%d:%d" % (mark.line + 1, mark.column + 1) if mark else "1:1"
        raise ProbeError("%s:%s: %s" % (label, pos, getattr(e, "problem", None) or e))
    return root


def read(path):
    """The document of the probe file at path (see the module's rules)."""
    with open(path, encoding="utf-8") as f:
        return parse(f.read(), path)


def _subst(v, params, label):
    if isinstance(v, str) and v.startswith("$") and v != "$dtype":
        if v[1:] not in params:
            raise ProbeError("%s: unknown parameter '%s'" % (label, v))
        return params[v[1:]]
    if isinstance(v, list):
        return [_subst(x, params, label) for x in v]
    return v


def spec_of(doc, label="<probe>"):
    """The spec of a probe's document: name, description, dtypes, params,
    ops (each a dict of its keys, every `$name` replaced by its
    parameter's number; `$dtype` stays), outputs (the buffer names)."""
    if not isinstance(doc, dict):
        raise ProbeError("%s:1:1: a probe is a mapping" % label)
    params = doc.get("params") or {}
    ops = []
    for op in doc.get("ops") or []:
        ops.append({k: v if k in TEXT_KEYS else _subst(v, params, "%s: op '%s'" % (
            label, op.get("out"))) for k, v in op.items()})
    return {"name": doc.get("name"), "description": doc.get("description", ""),
            "dtypes": list(doc.get("dtypes") or []), "params": dict(params), "ops": ops,
            "outputs": [o["name"] for o in doc.get("outputs") or []]}


def load(path):
    """The spec of the probe file at path (see spec_of)."""
    return spec_of(read(path), path)


def loads(text, label="<probe>"):
    """The spec of a probe's text."""
    return spec_of(parse(text, label), label)
