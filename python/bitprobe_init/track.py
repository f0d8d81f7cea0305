"""Which module's __init__ is running: the op recorder's module field during
construction (no forward runs then, so its forward hooks name nothing).

Every nn.Module subclass's __init__ is wrapped (those that exist and, through
Module.__init_subclass__, those defined while the tracker is on, as
transformers' lazily imported model classes are), the way DeepSpeed's
zero.Init wraps them.  While an __init__ runs, a tag naming that instance is
on top of `stack` (the recorder's module stack); once the model is built,
names(model) maps each tag to the module's path in the ledger's words (the
root's class name, a descendant's dotted path), so that the ledger can be
rewritten with paths (rename_ledger)."""
import json
import os
import re

import torch.nn as nn

TAG = "@init:"
_TAG_RE = re.compile(r'"module":"(@init:\d+)"')


def _subclasses(cls):
    out, todo = [], [cls]
    while todo:
        c = todo.pop()
        for s in c.__subclasses__():
            if s not in out:
                out.append(s)
                todo.append(s)
    return out


class InitTracker:
    def __init__(self, stack):
        self.stack = stack
        self.tags = {}      # id(module) -> tag
        self.keep = []      # the modules tagged (ids stay unique while held)
        self.depth = {}     # id(module) -> nesting of its own __init__ (super() chains)
        self.wrapped = []   # (class, original __init__)
        self.old_subclass = None

    def _wrap(self, cls):
        init = cls.__dict__.get("__init__")
        if init is None or getattr(init, "_bp_track", False):
            return
        tracker = self

        def wrapper(mod, *a, **k):
            i = id(mod)
            first = i not in tracker.depth or tracker.depth[i] == 0
            if first:
                tag = tracker.tags.get(i)
                if tag is None:
                    tag = tracker.tags[i] = "%s%d" % (TAG, len(tracker.keep))
                    tracker.keep.append(mod)
                tracker.stack.append(tag)
            tracker.depth[i] = tracker.depth.get(i, 0) + 1
            try:
                init(mod, *a, **k)
            finally:
                tracker.depth[i] -= 1
                if first and tracker.stack and tracker.stack[-1] == tracker.tags[i]:
                    tracker.stack.pop()

        wrapper._bp_track = True
        wrapper.__wrapped__ = init
        wrapper.__name__ = getattr(init, "__name__", "__init__")
        wrapper.__qualname__ = getattr(init, "__qualname__", "__init__")
        wrapper.__doc__ = getattr(init, "__doc__", None)
        cls.__init__ = wrapper
        self.wrapped.append((cls, init))

    def __enter__(self):
        for c in [nn.Module] + _subclasses(nn.Module):
            self._wrap(c)
        self.old_subclass = nn.Module.__dict__.get("__init_subclass__")
        tracker = self

        def init_subclass(cls, **kw):
            super(nn.Module, cls).__init_subclass__(**kw)
            tracker._wrap(cls)

        nn.Module.__init_subclass__ = classmethod(init_subclass)
        return self

    def __exit__(self, *exc):
        for cls, init in reversed(self.wrapped):
            if getattr(cls.__dict__.get("__init__"), "_bp_track", False):
                cls.__init__ = init
        self.wrapped = []
        if self.old_subclass is None:
            try:
                del nn.Module.__init_subclass__
            except AttributeError:
                pass
        else:
            nn.Module.__init_subclass__ = self.old_subclass
        return False

    def tag_of(self, mod):
        """The tag of a module (one is made for a module built elsewhere)."""
        i = id(mod)
        if i not in self.tags:
            self.tags[i] = "%s%d" % (TAG, len(self.keep))
            self.keep.append(mod)
        return self.tags[i]

    def names(self, model):
        """tag -> the module's path: the root's class name, a descendant's
        dotted path; a module not in the model: '<Class> (not in the model)'."""
        path = {}
        for p, m in model.named_modules():
            path.setdefault(id(m), p or type(model).__name__)
        return {tag: path.get(i, "%s (not in the model)" % type(self.keep[int(tag[len(TAG):])]).__name__)
                for i, tag in self.tags.items()}


def rename_ledger(path, names):
    """Rewrites the ledger at path with module paths for tags (atomic)."""
    tmp = path + ".paths"
    with open(path) as src, open(tmp, "w") as dst:
        for line in src:
            if TAG in line:
                line = _TAG_RE.sub(lambda m: '"module":' + json.dumps(names.get(m.group(1), ""))
                                   , line)
            dst.write(line)
    os.replace(tmp, path)
