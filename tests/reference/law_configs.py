"""Small configs (transformers' config.json dicts) the published laws are checked on: a GQA Llama with an untied
head, a Mixtral of 4 experts (top 2), a GPT-2 (tied head, LayerNorm, biases, learned positions)."""

LLAMA = {"model_type": "llama", "vocab_size": 97, "hidden_size": 32, "num_hidden_layers": 2,
         "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 48, "tie_word_embeddings": False}
MIXTRAL = {"model_type": "mixtral", "vocab_size": 97, "hidden_size": 32, "num_hidden_layers": 2,
           "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 48, "num_local_experts": 4,
           "num_experts_per_tok": 2}
GPT2 = {"model_type": "gpt2", "vocab_size": 97, "n_embd": 32, "n_layer": 3, "n_head": 4, "n_positions": 64}
#: GPT-3 175B as Narayanan et al. and Korthikanti et al. evaluate it: l = 96, h = 12288, a = 96, s = 2048, V = 51200
GPT3 = {"model_type": "gpt2", "vocab_size": 51200, "n_embd": 12288, "n_layer": 96, "n_head": 96, "n_positions": 2048}
#: the 1T model of Narayanan et al. 2021, Table 1 (128 layers, h = 25600, 160 heads; s = 2048, V = 51200)
GPT_1T = {"model_type": "gpt2", "vocab_size": 51200, "n_embd": 25600, "n_layer": 128, "n_head": 160,
          "n_positions": 2048}
