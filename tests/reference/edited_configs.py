"""Small config.json files of hand-written families, values set on them, and the same values as the fields a user
would edit: the reference is what transformers builds from the edited file on the meta device.

Each case: (name, config, values set, the same values as the fields edited); the count is the base model's
(``AutoModel``).  The names say what the edit leaves and what follows it, as transformers computes it.
"""

from __future__ import annotations

import json
from functools import lru_cache

from tests.reference.inferred_builds import built

SMALL = {"hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 512,
         "vocab_size": 1000}
NEOX = {"model_type": "gpt_neox", **SMALL}
LLAMA = {"model_type": "llama", **SMALL}
GPT2 = {"model_type": "gpt2", "n_embd": 128, "n_head": 4, "n_layer": 2, "vocab_size": 1000, "n_positions": 64}
MISTRAL = {"model_type": "mistral", **SMALL, "num_attention_heads": 8}
#: its class's 32 key/value heads (the default) must divide the heads
QWEN2 = {"model_type": "qwen2", **SMALL, "hidden_size": 1024, "num_attention_heads": 32}
T5 = {"model_type": "t5", "d_model": 128, "d_kv": 32, "d_ff": 256, "num_heads": 4, "num_layers": 2,
      "vocab_size": 1000}
BART = {"model_type": "bart", "d_model": 128, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4,
        "decoder_attention_heads": 4, "encoder_ffn_dim": 256, "decoder_ffn_dim": 256, "vocab_size": 1000,
        "max_position_embeddings": 64}
MIXTRAL = {"model_type": "mixtral", **SMALL, "num_key_value_heads": 2, "num_local_experts": 4,
           "num_experts_per_tok": 2}
QWEN3_MOE = {"model_type": "qwen3_moe", **SMALL, "num_key_value_heads": 2, "moe_intermediate_size": 128,
             "num_experts_per_tok": 2}

CASES = [
    ("gpt_neox intermediate_size given stays as H doubles", NEOX, {"H": 512}, {"hidden_size": 512}),
    ("llama head_dim left out follows H", LLAMA, {"H": 512}, {"hidden_size": 512}),
    ("llama head_dim given stays as H doubles", {**LLAMA, "head_dim": 64}, {"H": 512}, {"hidden_size": 512}),
    ("llama head_dim given stays as A doubles", {**LLAMA, "head_dim": 64}, {"A": 8}, {"num_attention_heads": 8}),
    ("gpt2 n_inner null follows H as 4H", {**GPT2, "n_inner": None}, {"H": 256}, {"n_embd": 256}),
    ("gpt2 n_inner set stays as H doubles", {**GPT2, "n_inner": 384}, {"H": 256}, {"n_embd": 256}),
    ("mistral key/value heads left out stay at the class's 8 as A doubles", MISTRAL, {"A": 16},
     {"num_attention_heads": 16}),
    ("qwen2 key/value heads left out stay at the class's 32 as A doubles", QWEN2, {"A": 64},
     {"num_attention_heads": 64}),
    ("t5 d_kv and d_ff given stay as H doubles", T5, {"H": 256}, {"d_model": 256}),
    ("t5 num_decoder_layers left out follows L", T5, {"L": 3}, {"num_layers": 3}),
    ("bart decoder_layers given stay as L grows", BART, {"L": 3}, {"encoder_layers": 3}),
    ("bart ffn dims given stay as H doubles", BART, {"H": 256}, {"d_model": 256}),
    ("mixtral intermediate_size given stays as H doubles", MIXTRAL, {"H": 512}, {"hidden_size": 512}),
    ("qwen3_moe experts as num_local_experts", {**QWEN3_MOE, "num_local_experts": 4}, {"N_e": 8},
     {"num_local_experts": 8}),
    ("qwen3_moe experts as num_experts", {**QWEN3_MOE, "num_experts": 4}, {"N_e": 8}, {"num_experts": 8}),
    ("qwen3_moe experts under both names", {**QWEN3_MOE, "num_experts": 4, "num_local_experts": 4}, {"N_e": 8},
     {"num_experts": 8, "num_local_experts": 8}),
    ("qwen3_moe intermediate sizes given stay as H doubles", {**QWEN3_MOE, "num_experts": 4}, {"H": 512},
     {"hidden_size": 512}),
]

IDS = [case[0] for case in CASES]


def edited_count(config: dict, fields: dict) -> int:
    """The parameters of the base model transformers builds from ``config`` with ``fields`` written in (built once
    per session: several tests ask for the same edited file)."""
    return _built(json.dumps({**config, **fields}, sort_keys=True))


@lru_cache(maxsize=None)
def _built(config: str) -> int:
    return built(json.loads(config), "base")
