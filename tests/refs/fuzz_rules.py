"""Operand and key rules for the fuzzer's generator (fuzz_gen.Gen.op).

RULES holds the ops whose keys constrain each other (a view's shape must
keep the element count, permute's dims must be a permutation, an index
must lie inside the dimension it indexes); each rule fills the op's spec
and returns (operands read, result shape), or None to give the draw up.

generic() draws any other op from what `bitprobe list --ops --json` says
of it, so that an op added to bitprobe's op list is drawn without a line
here: its operands (from the operand list, e.g. `a,b:tensor-or-number` or
`cond,a,b`: tensors of one shape or broadcasting to it, numbers where
allowed), then each key by its type and name (axis and dim keys inside the
rank, `dims` a permutation, `shape` a view of the same element count,
`eps` small and positive, weights and biases shaped like the last
dimension, dtypes, booleans).  The result shape is known for elementwise
and fused ops (the operands' broadcast shape) and for reductions over an
axis; otherwise it is unknown and the result is not read again.  bitprobe's
loader is the judge: a draw it refuses is dropped (fuzz_gen.validate).
"""
import math

# Key names with a meaning the generic rule honours.
AXIS_KEYS = ("axis", "dim", "dim0", "dim1")
WEIGHT_KEYS = ("weight", "bias", "gamma", "beta", "w")
EPS_KEYS = ("eps", "epsilon")


def _axis(r, nd, extra=0):
    """A dimension index in [-(nd + extra), nd + extra - 1]."""
    n = nd + extra
    if n <= 0:
        return 0
    ax = r.randrange(n)
    return ax - n if r.random() < 0.3 else ax


def _index_values(r, n, dim):
    """n indices into a dimension of size dim (dim > 0): repeats, the ends."""
    pool = [0, dim - 1, dim // 2]
    return [r.choice(pool) if r.random() < 0.3 else r.randrange(dim) for _ in range(n)]


def _factor_shape(r, numel, nd_hint):
    """A shape of numel elements, maybe with one -1; (shape as written,
    shape as it results)."""
    dims = []
    rest = numel
    for _ in range(r.randint(0, 2)):
        divs = [d for d in (1, 2, 3, 4, 5, 7, 8, 16, 32) if rest % d == 0] if rest else [1]
        d = r.choice(divs)
        dims.append(d)
        rest = rest // d if d else rest
    dims.append(rest)
    r.shuffle(dims)
    if r.random() < 0.2:
        dims.insert(r.randrange(len(dims) + 1), 1)
    written = list(dims)
    if numel > 0 and r.random() < 0.4:
        written[r.randrange(len(written))] = -1
    return written, tuple(dims)


def reshape(g, o, p, spec):
    r = g.r
    a = g.pick(p)
    if a is None:
        return None
    written, shape = _factor_shape(r, a.numel(), len(a.shape))
    if r.random() < 0.1:
        written, shape = [], ()
        if a.numel() != 1:
            return None
    spec.update(a=a.name, shape=written)
    return [a], shape


def transpose(g, o, p, spec):
    r = g.r
    a = g.pick(p, lambda b: len(b.shape) >= 1)
    if a is None:
        return None
    nd = len(a.shape)
    d0, d1 = _axis(r, nd), _axis(r, nd)
    spec.update(a=a.name, dim0=d0, dim1=d1)
    s = list(a.shape)
    s[d0 % nd], s[d1 % nd] = s[d1 % nd], s[d0 % nd]
    return [a], tuple(s)


def permute(g, o, p, spec):
    r = g.r
    a = g.pick(p)
    if a is None:
        return None
    nd = len(a.shape)
    dims = list(range(nd))
    r.shuffle(dims)
    written = [d - nd if r.random() < 0.2 else d for d in dims]
    spec.update(a=a.name, dims=written)
    return [a], tuple(a.shape[d] for d in dims)


def unsqueeze(g, o, p, spec):
    r = g.r
    a = g.pick(p)
    if a is None:
        return None
    nd = len(a.shape)
    ax = _axis(r, nd, 1)
    spec.update(a=a.name, axis=ax)
    s = list(a.shape)
    s.insert(ax % (nd + 1), 1)
    return [a], tuple(s)


def squeeze(g, o, p, spec):
    r = g.r
    a = g.pick(p)
    if a is None:
        return None
    nd = len(a.shape)
    spec["a"] = a.name
    if r.random() < 0.4:
        return [a], tuple(d for d in a.shape if d != 1)
    ones = [i for i, d in enumerate(a.shape) if d == 1]
    ax = r.choice(ones) if ones and r.random() < 0.7 else (r.randrange(nd) if nd else 0)
    spec["axis"] = ax - max(nd, 1) if r.random() < 0.3 else ax
    if nd == 0:
        return [a], ()
    return [a], tuple(d for i, d in enumerate(a.shape) if i != ax or d != 1)


def expand(g, o, p, spec):
    r = g.r
    a = g.pick(p, lambda b: b.numel() <= 4096)
    if a is None:
        return None
    new = [r.choice([1, 2, 3, 5]) for _ in range(r.choice([0, 0, 1, 2]))]
    written, shape = list(new), list(new)
    for d in a.shape:
        if d == 1 and r.random() < 0.7:
            e = r.choice([1, 2, 3, 7, 16])
            written.append(e)
            shape.append(e)
        else:
            written.append(-1 if r.random() < 0.3 else d)
            shape.append(d)
    if math.prod(shape) > g.max_numel:
        return None
    spec.update(a=a.name, shape=written)
    return [a], tuple(shape)


def _index_tensor(g, p, shape, dim):
    """An integer literal of the given shape holding indices below dim."""
    r = g.r
    dt = r.choice(["i64", "i64", "i32"])
    n = math.prod(shape)
    name = p.fresh()
    op = {"out": name, "op": "tensor", "values": _index_values(r, n, dim), "dtype": dt}
    if len(shape) != 1 or r.random() < 0.3:
        op["shape"] = list(shape)
    return p.add(op, shape, {d: dt for d in p.dtypes})


def index_select(g, o, p, spec):
    r = g.r
    a = g.pick(p, lambda b: len(b.shape) >= 1 and 0 not in b.shape)
    if a is None:
        return None
    nd = len(a.shape)
    ax = _axis(r, nd)
    n = r.choice([1, 2, 3, 5, 8, 17, 64])
    idx = _index_tensor(g, p, (n,), a.shape[ax % nd])
    spec.update(a=a.name, b=idx.name, axis=ax)
    s = list(a.shape)
    s[ax % nd] = n
    if math.prod(s) > g.max_numel:
        return None
    return [a, idx], tuple(s)


def embedding(g, o, p, spec):
    r = g.r
    w = g.pick(p, lambda b: len(b.shape) == 2 and b.shape[0] > 0 and b.numel() <= 20000)
    if w is None or r.random() < 0.3:
        w = g.source(p, (r.choice([1, 5, 32, 100]), r.choice([1, 3, 16, 64])))
        if w is None:
            return None
    ishape = r.choice([(), (1,), (7,), (3, 5), (64,)])
    idx = _index_tensor(g, p, ishape, w.shape[0])
    spec.update(a=idx.name, b=w.name)
    return [idx, w], tuple(ishape) + (w.shape[1],)


def clamp_tensor(g, o, p, spec):
    """torch.clamp with tensor bounds: min, max or both (then as often
    crossed as not: lo > hi gives hi), each of a's shape or broadcasting to
    it, in any dtype (promoted with a's)."""
    r = g.r
    a = g.pick(p)
    if a is None:
        return None
    spec["a"] = a.name
    ins = [a]
    for key in r.choice([("min",), ("max",), ("min", "max"), ("min", "max")]):
        same = [b for b in g.readable(p) if b.shape == a.shape and b is not a]
        if same and r.random() < 0.4:
            b = r.choice(same)
        else:
            b = g.source(p, g.bcast_of(a.shape) if r.random() < 0.4 else a.shape,
                         g.dtype_spec(), False)
        if b is None:
            return None
        spec[key] = b.name
        ins.append(b)
    return ins, a.shape


def _float_inputs(g, p, spec, ds, shapes):
    """Sources of the float dtype spec ds in these shapes, as spec's
    `inputs`."""
    ins = [g.source(p, sh, ds, True) for sh in shapes]
    if any(b is None for b in ins):
        return None
    spec["inputs"] = [b.name for b in ins]
    return ins


def _beta_alpha(r, spec):
    """beta (0: input ignored, among the drawn factors) and alpha."""
    if r.random() < 0.7:
        spec["beta"] = r.choice([0.0, 0.5, 1.0, -2.0, 0.1])
    if r.random() < 0.7:
        spec["alpha"] = r.choice([1.0, 2.0, -0.5, 0.3, 0.0])


def baddbmm(g, o, p, spec):
    """torch.baddbmm(input, batch1, batch2, beta, alpha): batch1 [B, m, k],
    batch2 [B, k, n] and an input broadcasting to [B, m, n], one float
    dtype."""
    r = g.r
    B, m, k, n = (r.choice([1, 2, 3, 5]), r.choice([1, 3, 8, 17]), r.choice([1, 7, 16, 31]),
                  r.choice([1, 5, 8, 33]))
    ds = g.dtype_spec(float_only=True)
    shapes = [r.choice([(B, m, n), (m, n), (n,), (1,), (), (B, 1, n), (m, 1)]), (B, m, k), (B, k, n)]
    ins = _float_inputs(g, p, spec, ds, shapes)
    if ins is None:
        return None
    _beta_alpha(r, spec)
    return ins, (B, m, n)


def linear(g, o, p, spec):
    """F.linear(x, weight, bias): x [..., k], weight [n, k], a bias (when
    drawn) broadcasting to [..., n]; one float dtype."""
    r = g.r
    lead = r.choice([(), (3,), (1, 4), (2, 3)])
    k, n = r.choice([1, 7, 16, 31]), r.choice([1, 5, 8, 33])
    ds = g.dtype_spec(float_only=True)
    shapes = [lead + (k,), (n, k)]
    if r.random() < 0.6:
        shapes.append(r.choice([(n,), (1,), (1, n)]) if lead else (n,))
    ins = _float_inputs(g, p, spec, ds, shapes)
    return None if ins is None else (ins, lead + (n,))


def addmm(g, o, p, spec):
    """torch.addmm(input, mat1, mat2, beta, alpha): mat1 [m, k], mat2
    [k, n], an input broadcasting to [m, n]; one float dtype."""
    r = g.r
    m, k, n = r.choice([1, 3, 8, 17]), r.choice([1, 7, 16, 31]), r.choice([1, 5, 8, 33])
    ds = g.dtype_spec(float_only=True)
    ins = _float_inputs(g, p, spec, ds,
                        [r.choice([(m, n), (n,), (1,), (), (m, 1)]), (m, k), (k, n)])
    if ins is None:
        return None
    _beta_alpha(r, spec)
    return ins, (m, n)


def layer_norm(g, o, p, spec):
    """F.layer_norm(x, [x.shape[-1]], weight, bias, eps): inputs [x],
    [x, weight] or [x, weight, bias], weight and bias of x's last dimension
    alone, all of x's float dtype."""
    r = g.r
    x = g.pick(p, lambda b: len(b.shape) >= 1 and 0 not in b.shape and b.numel() <= 20000
               and _float(b) and _dspec_like(p, b) is not None)
    if x is None or r.random() < 0.3:
        x = g.source(p, r.choice([(r.choice([1, 3, 64, 100]),), (1, 5), (7, 33), (16, 768),
                                  (2, 3, 129), (4, 1000)]), g.dtype_spec(True), True)
        if x is None:
            return None
    ins = [x] + [_like(g, p, x, x.shape[-1:]) for _ in range(r.choice([0, 1, 2, 2, 2]))]
    if any(b is None for b in ins):
        return None
    spec["inputs"] = [b.name for b in ins]
    if r.random() < 0.6:
        spec["eps"] = r.choice([1e-5, 1e-6, 1e-12, 1e-3, 0.1, 0.0])
    return ins, x.shape


def sdpa(g, o, p, spec):
    """F.scaled_dot_product_attention(q, k, v, is_causal, scale): q
    [..., L, E], k [..., S, E], v [..., S, Ev] of one float dtype, 2-D to
    4-D with the same leading dimensions, S = L or not; q now and then a
    buffer of the probe (its values what the chain made); now and then self
    attention (q, k and v one buffer), a 2-D operand a transposed view (x.t()
    as PyTorch holds it, and as the replay passes it: fuzz_check's views),
    a causal mask, a finite scale, now and then a `dtype:` (where no operand
    is a view: CUDA converts contiguous operands only).  Heads split by a
    4-D permute are model code's (fuzz_models.py)."""
    r = g.r
    nd = r.choice([2, 3, 4, 4])
    lead = ((), (r.choice([1, 2, 3, 5]),), (r.choice([1, 2]), r.choice([1, 2, 3, 4, 8])))[nd - 2]
    L = r.choice([1, 2, 3, 7, 16, 17, 33, 64])
    S = L if r.random() < 0.5 else r.choice([1, 2, 5, 16, 31, 64])
    E = r.choice([1, 2, 8, 16, 31, 64, 128])
    Ev = E if r.random() < 0.7 else r.choice([1, 4, 16, 33])
    while math.prod(lead) * L * S * (E + Ev) > 1 << 19 and L > 1:  # the oracle's cost
        L, S = max(1, L // 2), max(1, S // 2)
    ds = g.dtype_spec(float_only=True)
    # (a layout op's result too: CUDA reads sdpa's operands as the views
    # they are, and so does the replay, fuzz_check._as_view)
    q = g.pick(p, lambda b: 2 <= len(b.shape) <= 4 and 0 not in b.shape and
               b.numel() <= 20000 and _float(b) and _dspec_like(p, b) is not None)
    if q is not None and r.random() < 0.3:  # a buffer of the probe's chain as q
        lead, (L, E), ds = q.shape[:-2], q.shape[-2:], _dspec_like(p, q)
        S = L if r.random() < 0.5 else min(S, 64)
        Ev = E if r.random() < 0.7 else Ev
        if math.prod(lead) * L * S * (E + Ev) > 1 << 19:
            return None
    else:
        q = _sdpa_operand(g, p, lead, L, E, ds)
    if L == S and E == Ev and r.random() < 0.15:
        ins = [q, q, q]
    else:
        ins = [q, _sdpa_operand(g, p, lead, S, E, ds), _sdpa_operand(g, p, lead, S, Ev, ds)]
    if any(b is None for b in ins):
        return None
    spec["inputs"] = [b.name for b in ins]
    layout = {t["name"] for t in g.table if t["kind"] == "layout"}
    views = any(op["out"] in spec["inputs"] and op["op"] in layout for op in p.ops)
    if not views and r.random() < 0.08:  # q, k, v converted first (CUDA: not a view)
        spec["dtype"] = r.choice(["$dtype", "fp32", "bf16", "fp16", "fp64"])
    k = r.random()
    if k < 0.6:
        spec["is_causal"] = k < 0.4
    if r.random() < 0.4:
        spec["scale"] = r.choice([1 / math.sqrt(E), 0.125, 1.0, 0.5, 2.0, 1e-3, 10.0, -0.5,
                                  0.0, 1 / 3])
    return ins, lead + (L, Ev)


def _sdpa_operand(g, p, lead, n, e, ds):
    """An sdpa operand of shape lead + (n, e) in the float dtype spec ds: a
    source, or a 2-D one's transpose."""
    r = g.r
    shape, k = lead + (n, e), r.random()
    if len(shape) == 2 and k < 0.3:
        src = g.source(p, (e, n), ds, True)
        if src is None:
            return None
        op = {"out": p.fresh(), "op": "transpose", "a": src.name, "dim0": r.choice([0, -2]),
              "dim1": r.choice([1, -1])}
        return p.add(op, shape, src.dt)
    return g.source(p, shape, ds, True)


def _like(g, p, x, shape):
    """A tensor of shape in x's dtype (a weight of x): one of the probe's
    or a new source."""
    r = g.r
    like = [b for b in g.readable(p) if b.shape == shape and b.dt == x.dt and b is not x]
    if like and r.random() < 0.3:
        return r.choice(like)
    return g.source(p, shape, _dspec_like(p, x), True)


RULES = {"reshape": reshape, "view": reshape, "transpose": transpose, "permute": permute,
         "unsqueeze": unsqueeze, "squeeze": squeeze, "expand": expand,
         "index_select": index_select, "embedding": embedding, "clamp_tensor": clamp_tensor,
         "baddbmm": baddbmm, "linear": linear, "addmm": addmm, "layer_norm": layer_norm,
         "sdpa": sdpa}


# -- any other op ---------------------------------------------------------

def operand_list(raw):
    """`a,b:tensor-or-number` -> [("a", False), ("b", True)] (True: a
    number is allowed); "none" -> []."""
    if raw in ("none", ""):
        return []
    out = []
    for part in raw.split(","):
        name, _, kind = part.strip().partition(":")
        out.append((name, "number" in kind))
    return out


def _bool_tensor(g, p, shape):
    r = g.r
    name = p.fresh()
    op = {"out": name, "op": "tensor", "values": [r.randint(0, 1) for _ in range(math.prod(shape))],
          "shape": list(shape), "dtype": "bool"}
    return p.add(op, shape, {d: "bool" for d in p.dtypes})


def _float(b):
    return all(t in ("fp32", "bf16", "fp16", "fp64") for t in b.dt.values())


def _dspec_like(p, b):
    """A source's dtype spec giving b's dtype in every run dtype; None
    where none does (b fp32 in one run dtype, bf16 in another)."""
    if all(b.dt[d] == d for d in p.dtypes):
        return "$dtype"
    kinds = set(b.dt.values())
    return kinds.pop() if len(kinds) == 1 else None


def _inputs(g, o, p, spec):
    """A list operand of an op without a rule here that is not concat
    (layer_norm and sdpa have their rules above): a tensor, then tensors of
    its shape ([q, k, v]) or of its last dimension ([x, weight, bias])."""
    r = g.r
    same = r.random() < 0.5  # [q, k, v] all alike, else [x, weight, bias]
    x = g.pick(p, lambda b: len(b.shape) >= (2 if same else 1) and b.numel() <= 20000 and
               _float(b) and _dspec_like(p, b) is not None)
    if x is None:
        return None
    ds = _dspec_like(p, x)  # fused ops take one float dtype
    ins = [x]
    for _ in range(2 if r.random() < 0.7 else r.choice([0, 1, 3])):
        sh = x.shape if same else x.shape[-1:]
        like = [b for b in g.readable(p) if b.shape == sh and b is not x and b.dt == x.dt]
        b = r.choice(like) if like and r.random() < 0.3 else g.source(p, sh, ds, True)
        if b is None:
            return None
        ins.append(b)
    spec["inputs"] = [b.name for b in ins]
    if fill_keys(g, o, p, spec, x) is False:
        return None
    return ins, (x.shape if o["kind"] in ("elemwise", "fused") else None)


def generic(g, o, p, spec):
    """Operands and keys of an op from its table entry alone."""
    r = g.r
    opds = operand_list(o.get("operand_list", ""))
    if opds == [("inputs", False)]:
        return _inputs(g, o, p, spec)
    # `a,b:tensor-or-number` (as `cond,a,b:tensor-or-number`) lets each of
    # the listed operands be a number, as long as one is a tensor
    numbers = any(n for _, n in opds)
    ins = []
    base = None
    cond = ("cond", "condition", "mask")
    for name, _ in opds:
        if name in cond:
            b = g.pick(p, lambda b: all(t == "bool" for t in b.dt.values()) and
                       (base is None or _bcasts(b.shape, base.shape)))
            if b is None:
                b = _bool_tensor(g, p, base.shape if base is not None else g.shape(small=True))
        elif numbers and r.random() < 0.3 and \
                any(isinstance(spec.get(n), str) for n, _ in opds if n not in cond):
            spec[name] = g.scalar()  # a number, another operand being a tensor
            continue
        elif base is None:
            fused = o["kind"] == "fused"  # one float dtype, at least one dimension
            b = g.pick(p, lambda b: not fused or (_float(b) and len(b.shape) >= 1 and
                                                  _dspec_like(p, b) is not None))
        elif o["kind"] == "fused":
            # a weight: rms_norm(a, [d], b) takes b of the last dimension
            # alone, in a's dtype
            sh = base.shape[-1:]
            like = [c for c in g.readable(p) if c.shape == sh and c.dt == base.dt]
            b = r.choice(like) if like and r.random() < 0.5 else \
                g.source(p, sh, _dspec_like(p, base), True)
        else:
            same = [c for c in g.readable(p) if c.shape == base.shape]
            b = r.choice(same) if same and r.random() < 0.5 else None
            if b is None:
                sh = g.bcast_of(base.shape) if r.random() < 0.3 else base.shape
                b = g.source(p, sh, g.dtype_spec(), False)
        if b is None:
            return None
        if base is None:
            base = b
        spec[name] = b.name
        ins.append(b)
    shape = None
    if not ins:
        if opds:
            return None
    elif o["kind"] in ("elemwise", "fused"):
        shape = ins[0].shape
        for b in ins[1:]:
            if not _bcasts(b.shape, shape) and not _bcasts(shape, b.shape):
                return None
            shape = _broadcast(shape, b.shape)
    res = fill_keys(g, o, p, spec, base)
    if res is False:
        return None
    if res is not None:
        shape = res
    elif o["kind"] not in ("elemwise", "fused"):
        shape = None
    return ins, shape


def fill_keys(g, o, p, spec, a, skip=()):
    """Fills the keys of an op without a rule, by type and name (not those
    in skip); returns the result shape where a key decides it (a
    reduction's axis), None where it does not, False to give the draw
    up."""
    r = g.r
    nd = len(a.shape) if a is not None and a.shape is not None else 0
    shape = None
    keys = o["keys"]
    for k, t in keys.items():
        if k in spec or k in skip or (k not in o["required"] and r.random() < 0.5):
            continue
        if k in AXIS_KEYS and t == "integer":
            if nd == 0 and o["kind"] != "reduction":
                if k in o["required"]:
                    return False
                continue
            spec[k] = _axis(r, nd) if nd else r.choice([0, -1])
        elif k == "keepdim" or t == "bool":
            spec[k] = r.random() < 0.5
        elif t in ("integers", "dims") and k == "dims":
            dims = list(range(nd))
            r.shuffle(dims)
            spec[k] = dims
        elif t in ("integers", "dims", "shape") and k in ("shape", "size") and a is not None:
            spec[k] = _factor_shape(r, a.numel(), nd)[0]
        elif t in ("integers", "dims", "shape") and k.startswith("normalized") and a is not None:
            spec[k] = list(a.shape[-r.randint(1, nd):]) if nd else []
        elif t in ("integers", "dims", "shape"):
            spec[k] = list(g.shape(small=True))
        elif k == "correction":
            spec[k] = r.choice([0, 1, 1, 2])
        elif t == "integer":
            spec[k] = r.choice([0, 1, 1, 2, 3, 5, 8, 16, 100])
        elif t == "number":
            spec[k] = r.choice([1e-5, 1e-6, 1e-12, 1e-3, 0.1]) if k in EPS_KEYS else g.scalar()
        elif t in ("form", "formulation"):
            if not o["forms"]:
                continue
            spec[k] = r.choice(o["forms"])
        elif t == "dtype":
            spec[k] = r.choice(g.cast_dtypes())
        elif t in ("buffer", "buffer|number") and a is not None:
            if k in WEIGHT_KEYS and nd:
                sh = a.shape[-1:]
            else:
                sh = a.shape
            b = g.source(p, sh, g.dtype_spec(True), True)
            if b is None:
                return False
            spec[k] = b.name
        else:
            return False  # a key type this generator does not know
    if o["kind"] == "reduction" and "keepdim" not in keys:
        return None  # softmax's axis keeps the shape, a sum's would not: not known
    if o["kind"] == "reduction" and a is not None and "axis" in keys and not skip:
        keep = bool(spec.get("keepdim"))
        if "axis" not in spec:
            return (1,) * nd if keep else ()
        ax = spec["axis"] % nd if nd else 0
        return tuple(1 if i == ax else a.shape[i] for i in range(nd) if keep or i != ax)
    return shape


def _bcasts(s, to):
    """True when shape s broadcasts to shape to."""
    if s is None or to is None or len(s) > len(to):
        return False
    return all(x in (1, y) for x, y in zip(reversed(s), reversed(to)))


def _broadcast(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    return tuple(x if y == 1 else y for x, y in zip(a, b))
