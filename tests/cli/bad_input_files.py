"""The hostile files the bad-input table's cases name (see :mod:`tests.cli.bad_input_cases`): each is created,
when a case names it, in the case's own working directory by :func:`materialize`."""

import json
import os
from pathlib import Path


def _json(**data):
    return json.dumps(data)


NESTED = 100_000
CONFIGS = {  # c-NAME.json
    "bert": _json(model_type="bert"),
    **{f"quant-{name}": _json(model_type="llama", dtype="bfloat16", quantization_config=q) for name, q in (
        ("bnb", {"quant_method": "bitsandbytes", "load_in_4bit": True}), ("list", [1]),
        ("gptq-3", {"quant_method": "gptq", "bits": 3, "group_size": 128}),
        ("gptq-group", {"quant_method": "gptq", "bits": 4, "group_size": "128"}),
        ("awq-gemv", {"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemv"}),
        ("fp8-block", {"quant_method": "fp8", "weight_block_size": [128]}),
        ("fp8-skip", {"quant_method": "fp8", "modules_to_not_convert": [1]}))},
    "empty": "",
    "list": "[]",
    "null": "null",
    "malformed": '{"model_type": "bert"',
    "deep-object": '{"a": ' * NESTED + "1" + "}" * NESTED,
    "no-model-type": _json(hidden_size=768),
    "unknown-type": _json(model_type="gpt5"),
    "type-number": _json(model_type=5),
    "type-null": '{"model_type": null}',
    "bert-h-string": _json(model_type="bert", hidden_size="768"),
    "bert-h-float": _json(model_type="bert", hidden_size=768.0),
    "bert-h-negative": _json(model_type="bert", hidden_size=-768),
    "bert-h-bool": _json(model_type="bert", hidden_size=True),
    "bert-heads7": _json(model_type="bert", num_attention_heads=7),
    "bert-id2label-list": _json(model_type="bert", id2label=["a", "b"]),
    "bert-cross": _json(model_type="bert", add_cross_attention=True),
    "bert-untied": _json(model_type="bert", tie_word_embeddings=False),
    # a mixture whose checkpoint layout transformers' conversion mapping does not record (a valid config)
    "phimoe": _json(model_type="phimoe", hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=2, num_local_experts=4, vocab_size=50),
    "llama-kv3": _json(model_type="llama", num_key_value_heads=3),
    "llama-heads30": _json(model_type="llama", num_attention_heads=30),
    "llama-head-dim-odd": _json(model_type="llama", head_dim=63),
    "t5-proj": _json(model_type="t5", feed_forward_proj="gated-gelu-x"),
    "t5-dkv-string": _json(model_type="t5", d_kv="64"),
    "bart-decoder-heads7": _json(model_type="bart", encoder_attention_heads=16, decoder_attention_heads=7),
    "bart-decoder-ffn0": _json(model_type="bart", encoder_ffn_dim=4096, decoder_ffn_dim=0),
    "marian-pad": _json(model_type="marian", pad_token_id=99_999_999),
    "gpt2-embd-float": _json(model_type="gpt2", n_embd=768.5),
    "albert-groups": _json(model_type="albert", num_hidden_groups=0),
    "electra-cross": _json(model_type="electra", add_cross_attention=True),
    "roberta-cross": _json(model_type="roberta", add_cross_attention=True),
}
TEMPLATES = {  # t-NAME.j2
    "syntax-if": "{% if %}x{% endif %}",
    "unknown-filter": "{{ doc|nosuchfilter }}",
    "undefined": "{{ nosuch }}",
    "mro": "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "cycler": "{{ cycler.__init__.__globals__ }}",
    "attr-filter": "{{ doc|attr('__class__') }}",
    "format-escape": "{{ '{0.__class__.__mro__}'.format(t) }}",
    "mutate": "{{ t.update({'x': 1}) }}",
    "include": "{% include '/etc/passwd' %}",
    "import": "{% import 'os' as os %}{{ os.system('touch pwned') }}",
    "power": "{{ 10**(10**10) }}",
    "recursion": "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}",
    "loops-silent": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "power-chain": "{% set x = ((2**999)**999)**999 %}{{ (x * x) % 7 }}",
    "concat-bomb": '{% set a = "x" * 1000000 %}{% set b = a ~ a ~ a ~ a ~ a ~ a ~ a ~ a %}'
                   "{% set c = b ~ b ~ b ~ b ~ b ~ b ~ b ~ b %}{% set d = c ~ c ~ c ~ c ~ c ~ c ~ c ~ c %}"
                   "{{ d|length }}",
    "center-bomb": '{{ "x".center(1000000000)|length }}',
    "percent-bomb": '{{ ("%*d" % (1000000000, 1))|length }}',
    "format-bomb": '{{ "{:>1000000000}".format(1)|length }}',
    "filter-bomb": '{{ ("x"|center(1000000000))|length }}',
    "list-bomb": '{% set l = [0] * 999999 %}{{ (l * 1)|length }}{% set m = [l] * 999999 %}'
                 "{{ (m|sum(start=[]))|length }}",
}
SPECIALS = "\\{}$&#^_~%<>[]*`|\"'!+"  # TeX, Markdown and HTML specials
MARKED = "".join(f"Q{i}q{c}" for i, c in enumerate(SPECIALS)) + f"Q{len(SPECIALS)}q"  # each between markers
HOSTILE_FOLDER = MARKED  # a folder name (a model's name, from --config) made of them


def _make_fixture(folder: Path, name: str) -> None:
    path = folder / name
    if path.exists() or path.is_symlink():
        return
    if name.startswith("c-"):
        path.write_text(CONFIGS[name[2:-5]])
    elif name.startswith("t-"):
        path.write_text(TEMPLATES[name[2:-3]])
    elif name in ("fifo", "fifo.svg"):
        os.mkfifo(path)
    elif name.startswith("old."):
        path.write_text(f"old {name}\n")
        path.chmod(0o640)
    elif name in ("emptydir", "dir.svg", "dir.csv"):
        path.mkdir()
    elif name == "big.json":
        path.write_text('{"model_type": "bert", "x": "' + "x" * (2 << 20) + '"}')
    elif name == "big.j2":
        path.write_text("{{ title }}" * (2 << 17))
    elif name == "latin1.json":
        path.write_bytes(b'{"model_type": "bert", "name": "caf\xe9"}')
    elif name == "latin1.j2":
        path.write_bytes(b"caf\xe9 {{ title }}")
    elif name == "bom.json":
        path.write_bytes(b'\xef\xbb\xbf{"model_type": "bert"}')
    elif name == "zero-link.json":
        path.symlink_to("/dev/zero")
    elif name == "loop.json":
        path.symlink_to(name)
    elif name == "cfgdir-fifo":
        path.mkdir()
        os.mkfifo(path / "config.json")
    elif name == "cfgdir-bad":
        path.mkdir()
        (path / "config.json").write_text(CONFIGS["bert-heads7"])
    elif name.startswith("st-"):
        _make_checkpoint(path, name)
    elif name == HOSTILE_FOLDER or name == "cfg\x1b]0;pwned\x07":
        path.mkdir()
        (path / "config.json").write_text(CONFIGS["bert"])
    else:
        raise AssertionError(name)


def _safetensors(header, data: bytes = b"", length: int | None = None) -> bytes:
    """A safetensors file: the 8-byte header length (``length``, else the header's own), the header, the data."""
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    return (len(raw) if length is None else length).to_bytes(8, "little") + raw + data


TENSOR = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
#: hostile checkpoints (st-NAME): files, and folders holding an index and its shards
CHECKPOINTS = {
    "st-short.safetensors": b"\x10\x00",
    "st-truncated.safetensors": _safetensors({"x": TENSOR}, length=4096),
    "st-huge.safetensors": _safetensors({"x": TENSOR}, length=2**63),
    "st-text.safetensors": b"this is a text file, not a checkpoint at all\n",
    "st-list.safetensors": _safetensors([1, 2], b"\0" * 8),
    "st-no-shape.safetensors": _safetensors({"x": {"dtype": "F32", "data_offsets": [0, 8]}}, b"\0" * 8),
    "st-outside.safetensors": _safetensors({"x": {**TENSOR, "data_offsets": [0, 10**12]}}, b"\0" * 8),
    "st-good.safetensors": _safetensors({"x": TENSOR}, b"\0" * 8),
    "st-gguf.gguf": b"GGUF\x03\x00\x00\x00" + b"\xff" * 16,
    "st-empty.gguf": b"GGUF\x03\x00\x00\x00" + bytes(16),  # version 3, no tensor, no key
}
CHECKPOINT_FOLDERS = {  # an index and its files
    "st-index-no-shard": {"model.safetensors.index.json": _json(weight_map={"x": "gone.safetensors"})},
    "st-index-escape": {"model.safetensors.index.json": _json(weight_map={"x": "../st-good.safetensors"})},
    "st-index-list": {"model.safetensors.index.json": "[]"},
    "st-two-files": {"a.safetensors": _safetensors({"x": TENSOR}, b"\0" * 8),
                     "b.safetensors": _safetensors({"y": TENSOR}, b"\0" * 8)},
    "st-no-config": {"model.safetensors": _safetensors({"x": TENSOR}, b"\0" * 8)},
    "st-no-dtype": {"model.safetensors": _safetensors({"x": TENSOR}, b"\0" * 8), "config.json": CONFIGS["bert"]},
}


def _make_checkpoint(path: Path, name: str) -> None:
    if name in CHECKPOINTS:
        path.write_bytes(CHECKPOINTS[name])
        return
    path.mkdir()
    for file, content in CHECKPOINT_FOLDERS[name].items():
        (path / file).write_bytes(content if isinstance(content, bytes) else content.encode())


FIXTURES = ["fifo.svg", "fifo", "old.md", "old.csv", "old.svg", "emptydir", "dir.svg", "dir.csv", "big.json",
            "big.j2", "latin1.json", "latin1.j2", "bom.json", "zero-link.json", "loop.json", "cfgdir-fifo",
            "cfgdir-bad", HOSTILE_FOLDER, "cfg\x1b]0;pwned\x07", *CHECKPOINTS, *CHECKPOINT_FOLDERS]


def materialize(folder: Path, args) -> None:
    """Create in ``folder`` every fixture an argument names (``fifo``, ``c-NAME.json``, ``old.md``, ...)."""
    for arg in args:
        text = arg.decode("utf-8", "surrogateescape") if isinstance(arg, bytes) else arg
        first = text.split("/")[0]
        if (first in FIXTURES or first.startswith("c-") and first[2:-5] in CONFIGS
                or first.startswith("t-") and first[2:-3] in TEMPLATES):
            _make_fixture(folder, first)
