"""One way against the reference, judged: the comparisons through bitprobe
diff (compare.py), the oracle's verdict on the RoPE tensors, the ops that
introduced each difference, uninitialised memory and its code path; then
the line per way and which way to use.  audit.py runs the builds and the
oracle, and calls analyse() once per way."""
import os
import re

from . import compare, rope, stio


def _oracle_verdict(ref_name, way_name, dref, dway):
    def bad(d):
        return (d or {}).get("mismatched", 0)

    def mu(d):
        return compare.ulp_value(d)
    r, w = (bad(dref), mu(dref)), (bad(dway), mu(dway))
    if r == (0, 0) and w == (0, 0):
        return "both correctly rounded"
    if r == w:
        return "the same on both sides: %d of %s elements off the correctly rounded values, " \
               "by at most %s ulp" % (r[0], (dref or {}).get("total"), r[1])
    if w == (0, 0):
        return "%s correctly rounded, %s not: %s is right" % (way_name, ref_name, way_name)
    if r == (0, 0):
        return "%s correctly rounded, %s not: %s is right" % (ref_name, way_name, ref_name)
    closer = ref_name if (r[1], r[0]) < (w[1], w[0]) else way_name if (w[1], w[0]) < (r[1], r[0]) \
        else None
    if closer is None:
        return "neither correctly rounded, equally far"
    def u(x):
        return "a NaN" if x == float("inf") else "%s ulp" % x
    return "neither correctly rounded; %s is closer (at most %s off, against %s)" % (
        closer, u(r[1] if closer == ref_name else w[1]), u(w[1] if closer == ref_name else r[1]))


def _formula_matches(dref, what):
    """Whether the oracle's formula is the module's: the reference build
    lies within a few ulps of it (a 1-ulp transcendental or pow grows
    through the positions in cos/sin, so those only need to agree on most
    elements)."""
    if dref is None:
        return False
    mu = compare.ulp_value(dref)
    if what == "inv_freq":
        return mu <= 4
    return (dref.get("mismatched_percent") or 0) <= 25.0


def analyse(au, ref, w, oracle_values, oracle_probe_of, a):
    """The comparison of way w with the reference: the report's entry."""
    res = {"way": w.name, "groups": []}
    d = os.path.join(au.dir, "compare", w.name)
    groups = compare.group_way(ref, w)
    A, B = compare.write_pairs(ref, w, groups, a.dtype, d, also=oracle_values)
    results = {}
    if A:
        results = compare.run_diff(au.bitprobe, os.path.join(d, "a.safetensors"),
                                   os.path.join(d, "b.safetensors"),
                                   os.path.join(d, "diff.json"), a.first, au.env)
    # the oracle's values, as each side is compared
    O = {}
    for g in groups:
        n = g["names"][0]
        if n not in oracle_values:
            continue
        for name in (n, g.get("model_dtype_name")):
            if not name or name not in B:
                continue
            key = rope.dtype_key(stio.dtype_name(B[name].dtype))
            ov = oracle_values[n].get(key)
            if ov is not None and ov.numel() == B[name].numel():
                O[name] = ov.reshape(B[name].shape)
    ores = oares = {}
    if O:
        stio.write(os.path.join(d, "oracle.safetensors"), O)
        ores = compare.run_diff(au.bitprobe, os.path.join(d, "oracle.safetensors"),
                                os.path.join(d, "b.safetensors"),
                                os.path.join(d, "oracle-way.json"), a.first, au.env)
        oares = compare.run_diff(au.bitprobe, os.path.join(d, "oracle.safetensors"),
                                 os.path.join(d, "a.safetensors"),
                                 os.path.join(d, "oracle-reference.json"), a.first, au.env)
    twin = au.twins.get(w.name)
    ledger_entries = None
    lj = None
    for g in groups:
        n = g["names"][0]
        e = {"pattern": g["pattern"], "names": g["names"][:64], "count": len(g["names"]),
             "kind": g["kind"], "persistent": g["persistent"], "owner": g.get("owner"),
             "status": g["status"], "why": g.get("why"),
             "ref": g["ref"] and {"dtype": g["ref"]["dtype"], "shape": g["ref"]["shape"]},
             "way": g["way"] and {"dtype": g["way"]["dtype"], "shape": g["way"]["shape"]}}
        if g["status"] == "compare":
            r = results.get(n)
            if r is None:
                raise RuntimeError("bitprobe diff gave no result for '%s'" % n)
            e["diff"] = compare.summary(r)
            e["compared_in"] = g.get("compared_in")
            if g.get("cast"):
                e["cast"] = g["cast"]
            e["status"] = "identical" if r and not r.get("mismatched") else "differs"
            mn = g.get("model_dtype_name")
            if mn:
                e["model_dtype"] = {"dtype": a.dtype, "diff": compare.summary(results.get(mn))}
        elif g["status"] == "identical" and n in results:
            e["diff"] = compare.summary(results.get(n))
        # the oracle, on the tensor as compared (else the model-dtype one)
        for name in (n, g.get("model_dtype_name")):
            if name and name in O:
                pr = oracle_probe_of.get(n)
                dw, dr = compare.summary(ores.get(name)), compare.summary(oares.get(name))
                what = "inv_freq" if n.endswith("inv_freq") else "cache"
                o = {"probe": pr["name"], "formula": pr["desc"], "module": pr["module"],
                     "dtype": stio.dtype_name(B[name].dtype), "tensor": name,
                     "reference": dr, "way": dw}
                if _formula_matches(dr, what):
                    o["verdict"] = _oracle_verdict(ref.name, w.name, dr, dw)
                else:
                    o["verdict"] = ("no verdict: the reference build is not within a few ulps "
                                    "of this formula (the module computes something else)")
                    o["formula_mismatch"] = True
                e["oracle"] = o
                break
        # uninitialised: differs from its poisoned twin
        if twin is not None and twin.ok and g["way"] is not None:
            tf = twin.facts.get(n)
            if tf and tf.get("hash") and tf.get("hash") != g["way"].get("hash"):
                e["status"] = "uninitialised"
                e["uninit"] = uninit(w, twin, n, ref)
        if e["status"] in ("differs",) and g["way"] is not None and w.ledger():
            if ledger_entries is None:
                try:
                    ledger_entries, lj = compare.ledger_diff(
                        au.bitprobe, ref.ledger(), w.ledger(), os.path.join(d, "ledger.json"),
                        au.env)
                    au.ledgers[w.name] = compare.Ledger(w.ledger())
                except Exception as ex:  # bitprobe failed on its own ledgers: trouble
                    ledger_entries, lj = {}, {"error": str(ex)}
                    res["error"] = "the ledger diff: %s" % ex
            L = au.ledgers.get(w.name)
            if L is not None:
                e["introduced"] = compare.introduced(L, ledger_entries, g["way"])
                intro = e["introduced"]
                if not intro.get("found") and intro.get("why", "").startswith("no recorded op"):
                    # bytes nothing produced, values nothing reproduces
                    vn = compare.values_note(w.tensors()[n], ref.tensors().get(n))
                    if _garbage(vn):
                        e["status"] = "uninitialised"
                        e["uninit"] = {"code_path": "no recorded op of %s produced these bytes"
                                       " and they hold values no way reproduces" % w.name,
                                       "values": _values_text(vn), "evidence": "values"}
        res["groups"].append(e)
    if lj is not None:
        res["ledger"] = {"counts": lj.get("counts"), "alignment": lj.get("alignment"),
                         "error": lj.get("error")}
    return res


def intros(g):
    it = g.get("introduced") or {}
    return [it] + list(it.get("also", [])) if it.get("found") else []


def value_from_explain(d, ex):
    """torch.tensor(NUMBER) gets its number from explain's cast line
    ('element 0: 10000 -> 9984')."""
    if "torch.tensor(NUMBER) [] in " not in d.get("summary", ""):
        return
    for line in ex.get("text", []):
        m = re.search(r"element 0: (\S+) -> (\S+)\)", line)
        if m:
            dt = d["summary"].split("torch.tensor(NUMBER) [] in ", 1)[1].split(":", 1)[0]
            d["summary"] = d["summary"].replace(
                "torch.tensor(NUMBER) [] in %s" % dt,
                "torch.tensor(%s) in %s (= %s)" % (m.group(1), dt, m.group(2)), 1)
            return


def _garbage(vn):
    if not vn:
        return False
    r = vn.get("reference") or {}
    return (vn["nan"] > r.get("nan", 0) or vn["inf"] > r.get("inf", 0) or
            vn["subnormal"] > r.get("subnormal", 0) or
            (vn["zero"] == vn["elements"] and r.get("zero", 0) < vn["elements"]))


def _values_text(vn):
    if not vn:
        return None
    parts = []
    for k in ("zero", "nan", "inf", "subnormal"):
        if vn.get(k):
            parts.append("%d %s" % (vn[k], k if k != "zero" else "zeros"))
    s = ", ".join(parts) or "no NaN, inf, subnormal or zero"
    s += " in %d elements" % vn["elements"]
    if "max_abs" in vn:
        s += ", largest magnitude %.6g" % vn["max_abs"]
    r = vn.get("reference")
    if r is not None:
        rp = ["%d %s" % (r[k], k if k != "zero" else "zeros") for k in ("zero", "nan", "inf",
                                                                         "subnormal") if r.get(k)]
        s += " (the reference: %s)" % (", ".join(rp) or "normal numbers only")
    return s


def uninit(w, twin, n, ref):
    """Why a tensor of way w is uninitialised: where its memory came from
    (the twin's allocation record), what re-initialised the model, and what
    it holds."""
    f = w.facts.get(n, {})
    tf = twin.facts.get(n, {})
    al = tf.get("alloc") or {}
    owner = f.get("owner", "?")
    kind = "non-persistent buffer" if f.get("persistent") is False else \
        "persistent buffer" if f.get("kind") == "buffer" else f.get("kind", "tensor")
    parts = []
    if al:
        where = {"to_empty": "Module.to_empty(device=%s)" % w.info.get("device"),
                 "re-initialisation": "the re-initialisation",
                 "construction": "the construction (module %s)" % (al.get("module") or "?")}
        parts.append("%s allocated it with %s: memory nothing initialised" % (
            where.get(al.get("phase"), al.get("phase")), al.get("op")))
    else:
        parts.append("its memory came from an uninitialised allocation (it changes when "
                     "those are poisoned)")
    if w.info.get("reinit"):
        parts.append("the re-initialisation, %s, did not write it (%s %s)" % (
            w.info["reinit"], owner, "has reset_parameters(), which does not write it"
            if f.get("owner_reset_parameters") else "has no reset_parameters()"))
    if f.get("persistent") is False:
        parts.append("a non-persistent buffer: no checkpoint restores it")
    elif f.get("kind") == "buffer":
        parts.append("a persistent buffer: a checkpoint that holds it restores it")
    vn = compare.values_note(w.tensors()[n], ref.tensors().get(n)) if n in w.tensors() else None
    return {"code_path": "%s (%s, %s): %s" % (n, owner, kind, "; ".join(parts)),
            "alloc": al or None, "reinit": w.info.get("reinit"), "values": _values_text(vn),
            "evidence": "poisoned twin"}


def group_line(c):
    gs = c["groups"]
    n = sum(g["count"] for g in gs)
    bad = [g for g in gs if g["status"] != "identical"]
    nb = sum(g["count"] for g in bad)
    if not bad:
        return "all %d tensors identical" % n
    kinds = {}
    for g in bad:
        kinds[g["status"]] = kinds.get(g["status"], 0) + g["count"]
    words = {"differs": "differ", "uninitialised": "uninitialised", "only_in_reference":
             "only in the reference", "only_in_way": "only in this way",
             "not_comparable": "not comparable"}
    return "%d of %d tensors: %s" % (nb, n, ", ".join("%d %s" % (v, words.get(k, k))
                                                        for k, v in kinds.items()))


def recommend(rep, ref_name):
    ok, bad = [], []
    for c in rep["comparisons"]:
        if all(g["status"] == "identical" for g in c["groups"]) and not c.get("error"):
            ok.append(c["way"])
        else:
            bad.append(c)
    use = ref_name + (" (or a way identical to it: %s)" % ", ".join(ok) if ok else "")
    orc = [g["oracle"]["verdict"] for c in rep["comparisons"] for g in c["groups"]
           if g.get("oracle") and not g["oracle"].get("formula_mismatch")]
    others = [c["way"] for c in rep["comparisons"]]
    if orc and not any(v.endswith("%s is right" % w) or ("%s is closer" % w) in v
                       for v in orc for w in others):
        use += "; the oracle sides with %s on every RoPE tensor it computed" % ref_name
    avoid = []
    for c in bad:
        w = c["way"]
        gs = [g for g in c["groups"] if g["status"] != "identical"]
        why = []
        un = [g for g in gs if g["status"] == "uninitialised"]
        if un:
            why.append("it leaves %s uninitialised (%s): recompute them in the "
                       "re-initialisation (the owning module's reset_parameters() or the "
                       "model's init_weights()), or build them outside meta" % (
                           ", ".join(g["pattern"] for g in un[:4]),
                           (un[0].get("uninit") or {}).get("reinit") or "no re-initialisation"))
        diff = [g for g in gs if g["status"] == "differs"]
        if diff:
            intro = next((g.get("introduced") for g in diff if (g.get("introduced") or {})
                          .get("found")), None)
            names = ", ".join(g["pattern"] for g in diff[:4]) + (
                " and %d more" % (len(diff) - 4) if len(diff) > 4 else "")
            fixes = []
            for g in diff:
                for d in intros(g):
                    if d.get("fix") and d["fix"] not in fixes:
                        fixes.append(d["fix"])
            if fixes:
                why.append("%s differ: %s" % (names, "; ".join(fixes)))
            elif intro and w == "cpu-bf16":
                why.append("%s differ: the default dtype makes %s compute in low precision; "
                           "give it an explicit dtype" % (names, intro["op"]))
            elif intro:
                why.append("%s differ: %s introduced it" % (names, intro["summary"]))
            else:
                why.append("%s differ" % names)
        other = [g for g in gs if g["status"] not in ("uninitialised", "differs")]
        if other:
            why.append("%s: %s" % (", ".join(g["pattern"] for g in other[:4]),
                                   other[0]["status"].replace("_", " ")))
        if c.get("error"):
            why.append(c["error"])
        avoid.append("%s: %s" % (w, "; ".join(why)))
    return {"use": use, "avoid": avoid, "ok": ok}
