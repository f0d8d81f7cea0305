"""A stand-in for transformers where it is not installed, with only what
the init audit calls: __version__, AutoConfig.from_pretrained(DIR) (reads
DIR/config.json), AutoModelForCausalLM.from_config(config, torch_dtype=)
(transformers 4's keyword: the default dtype during construction) and
AutoModel.  The model is tests/init_audit/llama2023.py's, sized by the
config.  It checks the audit's Hugging Face path (a config file or its
directory, the dtype keyword, the config's RoPE facts), not transformers."""
import json
import os
import sys

import torch

__version__ = "4.99.0+stub"


class PretrainedConfig:
    def __init__(self, d):
        self.__dict__.update(d)
        self.rope_theta = d.get("rope_theta", 10000.0)
        self.rope_scaling = d.get("rope_scaling")


class AutoConfig:
    @staticmethod
    def from_pretrained(path):
        with open(os.path.join(path, "config.json")) as f:
            return PretrainedConfig(json.load(f))


class AutoModelForCausalLM:
    @staticmethod
    def from_config(config, torch_dtype=None):
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
        import llama2023
        old = torch.get_default_dtype()
        torch.set_default_dtype(torch_dtype or torch.float32)
        try:
            return llama2023.LlamaLM(vocab=config.vocab_size, hidden=config.hidden_size,
                                     heads=config.num_attention_heads,
                                     inter=config.intermediate_size,
                                     layers=config.num_hidden_layers,
                                     max_pos=config.max_position_embeddings,
                                     base=config.rope_theta)
        finally:
            torch.set_default_dtype(old)


AutoModel = AutoModelForCausalLM
