"""bitprobe's init audit: build a model the ways users build it, each in a
fresh process, and find every buffer the checkpoint does not carry that
comes out different, the op that made the difference, and which side is
right.

    bitprobe init-audit MODEL [--ways LIST] [-o DIR] [--json F] [--markdown F]
    python3 -m bitprobe_torch init-audit MODEL ...      (the same, directly)

MODEL is a Hugging Face config.json (or a directory holding one; built
with transformers' AutoModel*.from_config, no weights) or MODULE:CALLABLE /
FILE.py:CALLABLE returning an nn.Module.

The modules, one job each:
  spec      what MODEL names and how a build process constructs it
  ways      the ways (cpu, cpu-bf16, cuda, meta, zero-init, fsdp2-meta):
            what each changes around construction, and where it can run
  track     names the module whose __init__ runs (the ledger's module
            field during construction)
  build     one way in one process: construct under the op recorder,
            capture every buffer (and parameter), write its bundle
  stio      safetensors in and out (plain or gzip'd), torch tensors
  compare   the ways against the reference: bitprobe diff on what each way
            holds, groups, provenance through the init ledgers, the
            introducing op
  judge     one way judged: the comparisons, the oracle's verdict, the
            introducing ops, uninitialised memory and its code path; the
            line per way and which way to use
  rope      RoPE-family buffers recognised, their formula (transformers'
            scalings) written as a probe and run on bitprobe's MPFR oracle
  effect    a forward on fixed token ids with each way's buffers
  report    the verdict, text, JSON and Markdown
  audit     the command: options, the build processes, progress, exit

Where it writes: -o DIR when given (kept), else a temporary directory
removed at the end.  DIR holds one bundle per way (DIR/WAY: manifest.json,
init/WAY.safetensors, init.ledger with its captures, way.json), the
comparison files (DIR/compare/WAY/{a,b,oracle}.safetensors), the oracle's
probes and run (DIR/oracle) and explain's probes (DIR/explain/WAY).
"""
