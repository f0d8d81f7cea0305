"""The init audit's report: one dict (what --json writes), rendered as text
(verdict first, what differs one group a line with its detail, the
failures again at the end) and as a Markdown ticket that says which way to
use.  Nothing here computes: audit.py fills the dict."""
import json


def _pct(x):
    return ("%.4g%%" % x) if x is not None else "?"


def counts_line(d):
    """'329320 of 524288 differ (62.81%), max 32512 ulp, max abs 2'"""
    if d is None:
        return "not compared"
    if d.get("status") == "identical" or not d.get("mismatched"):
        return "identical (%s elements)" % d.get("total", "?")
    s = "%d of %d differ (%s)" % (d["mismatched"], d["total"], _pct(d.get("mismatched_percent")))
    mu = d.get("max_ulp")
    if isinstance(mu, dict):
        v = mu.get("value")
        s += (", max %s ulp" % v) if isinstance(v, (int, float)) else (
            ", a NaN against a number (%s)" % v)
    ma = d.get("max_abs")
    if isinstance(ma, dict):
        v = ma.get("value")
        s += ", max abs %s" % ("%.6g" % v if isinstance(v, (int, float)) else v)
    return s


def _names(g):
    n = g["count"]
    return "%s (%d %s)" % (g["pattern"], n, g.get("kind", "buffer") + ("s" if n > 1 else "")) \
        if n > 1 else g["names"][0]


def _first_lines(d, la, lb, k, indent):
    out = []
    for f in (d or {}).get("first", [])[:k]:
        idx = str(f.get("index", f.get("flat")))
        a, b = f.get("a", {}), f.get("b", {})
        w = max(len(la), len(lb))
        out.append("%s%-12s %-*s %-26s %-10s %s" % (indent, idx, w, la, a.get("g20"),
                                                   a.get("hex"), a.get("fields")))
        out.append("%s%-12s %-*s %-26s %-10s %s  (%s ulp)" % (indent, "", w, lb, b.get("g20"),
                                                             b.get("hex"), b.get("fields"),
                                                             f.get("ulp")))
    return out


def introduced_lines(intro):
    """The introducing ops, each with explain's verdict under it."""
    if not intro:
        return []
    if not intro.get("found"):
        return ["introduced by: %s" % intro.get("why")]
    out = []
    for k, d in enumerate([intro] + list(intro.get("also", []))):
        s = ("introduced by: " if k == 0 else "and by: ") + d["summary"]
        if d.get("module"):
            s += " in module %s" % d["module"]
        if d.get("hint"):
            s += " (%s)" % d["hint"]
        out.append(s)
        ex = explain_line(d.get("explain"))
        if ex:
            out.append("  " + ex)
    t = intro.get("then") or []
    if t:
        out.append("then: %s" % ", ".join(t[:8]) + (" and %d more" % (len(t) - 8)
                                                    if len(t) > 8 else ""))
    return out


def explain_line(ex):
    if not ex:
        return None
    if ex.get("error"):
        return "explain: %s" % ex["error"]
    j = ex.get("json") or {}
    v = (j.get("conclusion") or {}).get("verdict")
    s = "explain (probe %s): %s" % (j.get("probe"), v or "no verdict")
    cast = [l.strip() for l in ex.get("text", []) if l.strip().startswith("the cast ")]
    if cast:
        s += "; " + cast[0]
    return s


def oracle_lines(o, ref_name, way_name):
    if not o:
        return []
    if o.get("error"):
        return ["oracle: %s" % o["error"]]
    out = ["oracle (%s: %s, every op correctly rounded): %s" % (
        o["probe"], o["formula"], o.get("verdict", ""))]
    for who, key in ((ref_name, "reference"), (way_name, "way")):
        d = o.get(key)
        if d is not None:
            out.append("  %-10s vs the oracle in %s: %s" % (who, o.get("dtype"), counts_line(d)))
    return out


def text(r, quiet=False, first=5):
    out = [r["verdict"]["line"]]
    fails = []
    ref = r.get("reference", "cpu")
    if not quiet:
        m = r.get("model", {})
        out.append("model: %s (%s, %s parameters), model dtype %s" % (
            m.get("spec"), m.get("class", "?"), m.get("params", "?"), r.get("dtype")))
        if r.get("cost"):
            out.append("cost: %s" % r["cost"])
        ran = ["%s (%s%s) %.1f s" % (w["name"], w.get("how"), "; " + w["note"] if w.get("note")
                                      else "", w.get("seconds") or 0)
               for w in r["ways"] if w["status"] == "ok"]
        out.append("ways: " + "; ".join(ran))
        for w in r["ways"]:
            extra = (["re-initialisation: " + w["reinit"]] if w.get("reinit") else []) + \
                w.get("notes", [])
            if w["status"] == "ok" and extra:
                out.append("  %s: %s" % (w["name"], "; ".join(extra)))
        sk = ["%s (%s)" % (w["name"], w.get("why")) for w in r["ways"] if w["status"] == "skipped"]
        if sk:
            out.append("skipped: " + "; ".join(sk))
        er = ["%s (%s)" % (w["name"], w.get("why")) for w in r["ways"] if w["status"] == "error"]
        if er:
            out.append("failed: " + "; ".join(er))
    for c in r.get("comparisons", []):
        w = c["way"]
        diff = [g for g in c["groups"] if g["status"] not in ("identical",)]
        same = [g for g in c["groups"] if g["status"] == "identical"]
        if not quiet:
            out.append("")
            out.append("%s against %s: %s" % (w, ref, c.get("line", "")))
        for g in diff:
            md = g.get("model_dtype")
            head = "%s: %s" % (_names(g), g["status"].replace("_", " "))
            if g["status"] in ("differs", "uninitialised"):
                head = "%s: %s %s: %s" % (_names(g), g["way"]["dtype"], g["way"]["shape"],
                                          counts_line(g.get("diff")))
                if md and (md.get("diff") or {}).get("mismatched"):
                    d = md["diff"]
                    head += "; in %s %d (%s)" % (md["dtype"], d["mismatched"],
                                                 _pct(d.get("mismatched_percent")))
                if g["status"] == "uninitialised":
                    head += " (uninitialised memory)"
            elif g.get("why"):
                head += ": " + g["why"]
            fails.append("%s: %s" % (w, head))
            if quiet:
                continue
            out.append("  " + head)
            if g.get("cast"):
                out.append("      compared as the way holds it: %s" % g["cast"])
            if md:
                out.append("      in %s (the model dtype, after .to()): %s" % (
                    md["dtype"], counts_line(md.get("diff"))))
            out.extend(_first_lines(g.get("diff"), ref, w, first, "      "))
            for line in introduced_lines(g.get("introduced")):
                out.append("      " + line)
            for line in oracle_lines(g.get("oracle"), ref, w):
                out.append("      " + line)
            u = g.get("uninit")
            if u:
                out.append("      uninitialised: %s" % u.get("code_path"))
                if u.get("values"):
                    out.append("      holds: %s" % u["values"])
        if same and not quiet:
            out.append("  identical: " + ", ".join(_names(g) for g in same[:12]) +
                       (" and %d more" % (len(same) - 12) if len(same) > 12 else ""))
            for g in same:
                for line in oracle_lines(g.get("oracle"), ref, w)[:1]:
                    out.append("      %s: %s" % (g["pattern"], line))
        if c.get("error"):
            out.append("  error: %s" % c["error"])
            fails.append("%s: %s" % (w, c["error"]))
    if not quiet:
        u = r.get("uninitialised_summary")
        if u:
            out.append("")
            out.append("uninitialised: %s" % u)
        e = r.get("effect")
        if e:
            out.append("")
            out.extend(effect_lines(e))
        o = r.get("oracle") or {}
        if o.get("skipped"):
            out.append("")
            out.append("no oracle for: " + "; ".join(o["skipped"]))
        rec = r.get("recommendation")
        if rec:
            out.append("")
            out.append("use: %s" % rec["use"])
            for a in rec.get("avoid", []):
                out.append("avoid: %s" % a)
        if r.get("files", {}).get("dir"):
            out.append("")
            out.append("kept in %s: a bundle per way (bitprobe diff %s/%s %s/WAY --cast), its "
                       "init ledger (bitprobe diff %s/%s/init.ledger %s/WAY/init.ledger)" % (
                           r["files"]["dir"], r["files"]["dir"], ref, r["files"]["dir"],
                           r["files"]["dir"], ref, r["files"]["dir"]))
    if fails and r["verdict"]["exit_status"] != 0:
        out.append("")
        out.append("failures:")
        out.extend("  " + f for f in fails)
    return "\n".join(out) + "\n"


def effect_lines(e):
    if e.get("status") != "ok":
        return ["effect: not measured: %s" % e.get("why")]
    out = ["effect (--effect): a forward on %d fixed token ids (vocabulary %d) in %s on %s, "
           "random weights:" % (e["tokens"], e["vocab"], e["dtype"], e["device"])]
    if e.get("note"):
        out.append("  (%s)" % e["note"])
    for w, x in e["ways"].items():
        if "max_abs" not in x:
            continue
        if x.get("logits"):
            s = "  %-10s max |log p - log p(ref)| %.4g; top-1 differs at %d of %d positions" % (
                w, x["max_abs"], x.get("top1_flips", 0), e["tokens"])
            if x.get("first_flip") is not None:
                s += " (first at %d)" % x["first_flip"]
            if x.get("first_position_differing") is not None:
                s += "; log-probs differ from position %d on" % x["first_position_differing"]
        else:
            s = "  %-10s max |output - output(ref)| %.4g (the model returns no logits)" % (
                w, x["max_abs"])
        out.append(s)
    return out


def _md_escape(s):
    return str(s).replace("|", "\\|")


def markdown(r, first=10):
    ref = r.get("reference", "cpu")
    m = r.get("model", {})
    out = ["# Init audit: %s" % _md_escape(m.get("spec")), "",
           "**%s**" % _md_escape(r["verdict"]["line"]), ""]
    rec = r.get("recommendation")
    if rec:
        out += ["**Which way to use:** %s" % _md_escape(rec["use"]), ""]
        for a in rec.get("avoid", []):
            out.append("- avoid %s" % _md_escape(a))
        out.append("")
    out += ["## Reproduce", "", "```sh", r.get("command", ""), "```", ""]
    out += ["## Environment", "", "| | |", "|---|---|"]
    for k, v in sorted((r.get("env") or {}).items()):
        out.append("| %s | %s |" % (k, _md_escape(json.dumps(v) if not isinstance(v, str) else v)))
    out.append("| model | %s (%s, %s parameters) |" % (_md_escape(m.get("spec")),
                                                      m.get("class"), m.get("params")))
    out.append("| model dtype | %s |" % r.get("dtype"))
    if r.get("cost"):
        out.append("| cost | %s |" % _md_escape(r["cost"]))
    out += ["", "## Ways", "", "| way | built | status | seconds |", "|---|---|---|---|"]
    for w in r["ways"]:
        st = w["status"] + ((": " + w["why"]) if w.get("why") else "")
        out.append("| %s | %s | %s | %s |" % (w["name"], _md_escape(w.get("how", "") + (
            "; " + w["note"] if w.get("note") else "")), _md_escape(st), w.get("seconds", "")))
    out.append("")
    shown = 0
    for c in r.get("comparisons", []):
        w = c["way"]
        out += ["## %s against %s" % (w, ref), "", _md_escape(c.get("line", "")), ""]
        groups = [g for g in c["groups"] if g["status"] != "identical"]
        if groups:
            out += ["| buffers | %s | differ | in the model dtype |" % w, "|---|---|---|---|"]
            for g in groups[:60]:
                md = g.get("model_dtype")
                out.append("| `%s` | %s %s | %s | %s |" % (
                    _md_escape(_names(g)), (g.get("way") or g.get("ref"))["dtype"],
                    (g.get("way") or g.get("ref"))["shape"],
                    _md_escape(counts_line(g.get("diff")) if g.get("diff") else
                               g["status"].replace("_", " ") + (": " + g["why"] if g.get("why")
                                                                 else "")),
                    _md_escape(counts_line(md.get("diff"))) if md else ""))
            out.append("")
        for g in groups[:12]:
            if shown > 40:
                break
            shown += 1
            out += ["### `%s`" % _md_escape(_names(g)), ""]
            if g.get("cast"):
                out.append("Compared as the way holds it: %s." % g["cast"])
                out.append("")
            f = (g.get("diff") or {}).get("first", [])[:first]
            if f:
                out += ["| index | %s | %s | ulp |" % (ref, w), "|---|---|---|---|"]
                for x in f:
                    a, b = x.get("a", {}), x.get("b", {})
                    out.append("| %s | %s `%s` `%s` | %s `%s` `%s` | %s |" % (
                        x.get("index"), a.get("g20"), a.get("hex"), a.get("fields"),
                        b.get("g20"), b.get("hex"), b.get("fields"), x.get("ulp")))
                out.append("")
            for line in introduced_lines(g.get("introduced")) + \
                    oracle_lines(g.get("oracle"), ref, w):
                out.append(("  - " if line.startswith("  ") else "- ") + _md_escape(line.strip()))
            u = g.get("uninit")
            if u:
                out.append("- uninitialised: " + _md_escape(u.get("code_path")))
                if u.get("values"):
                    out.append("- holds: " + _md_escape(u["values"]))
            cmds = [d["explain"]["command"] for d in
                    [g.get("introduced") or {}] + list((g.get("introduced") or {}).get("also", []))
                    if (d.get("explain") or {}).get("command")]
            if cmds and (r.get("files") or {}).get("dir"):
                out += ["", "```sh"] + cmds + ["```"]
            out.append("")
        same = [g for g in c["groups"] if g["status"] == "identical"]
        if same:
            out.append("Identical: " + ", ".join("`%s`" % _md_escape(_names(g)) for g in same[:30])
                       + (" and %d more" % (len(same) - 30) if len(same) > 30 else ""))
            out.append("")
    if r.get("uninitialised_summary"):
        out += ["## Uninitialised memory", "", _md_escape(r["uninitialised_summary"]), ""]
    if r.get("effect"):
        out += ["## Effect", ""] + [_md_escape(l) for l in effect_lines(r["effect"])] + [""]
    text_ = "\n".join(out) + "\n"
    if len(text_) > 65000:
        text_ = text_[:64000] + "\n\n(cut at 64000 characters: the JSON report has everything)\n"
    return text_
