"""Bad calls to the Python API: ``symparams.SymparamsError`` with a one-line message, and nothing else.

The promise for bad input, from Python: a bad argument to ``symparams.model``,
``Model.subs``/``with_switches``/``evaluate``/``block``/``rows``/
``breakdown``/``prove``/``derive``, ``symparams.solve``, ``symparams.sweep``,
``symparams.families.config.settings`` or ``symparams.documents.render.render``
raises :class:`symparams.SymparamsError` (a subclass is fine), never another
exception type, with a non-empty message on one line (naming the offending
value where the row gives a ``needle``) -- and never a hang beyond 10 s, a
memory blow-up, a file left behind or changed, or text run as code.

:data:`CALLS` is the table: ``(id, call, needle)``, each call a function of no
argument.  :data:`EXTREME` holds valid but extreme calls (a 3,000-digit size),
which may return or raise ``SymparamsError``, within the same limits.

How a call runs: in a child of the test process made with ``os.fork`` (the
package is imported once; a call costs milliseconds, not an interpreter's
start), in a fresh working directory whose tree must be the same afterwards
(so is the folder of hostile files the calls read).  The child reports what
the call raised through a pipe and ends with ``os._exit``.  The parent waits
:data:`CALL_SECONDS` (10 s) at most, then kills it.

Memory is measured, not capped: the child reads its resident set size before
the call and ``ru_maxrss`` after it (Linux starts a forked child's peak at its
size at the fork), and the growth must stay under :data:`GROWTH_KB` (400 MB:
the promise's 500 MB less the ~100 MB of an interpreter holding symparams,
SymPy and NumPy).  An address-space limit of 2 GiB above the child's size only
keeps a runaway bomb from taking the machine; it sits far above the threshold.

Known package bugs are marked ``xfail(strict=True)`` through :data:`XFAIL`
(id -> what goes wrong); when one is fixed its xfail fails, and the entry is
to be removed.
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import stat
import time
import traceback
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp

import symparams
from symparams import model, solve, sweep
from symparams.documents.render import render
from symparams.families.config import settings

CALL_SECONDS = 10
GROWTH_KB = 400 * 1024

BERT = model("bert-base")
FAMILY = BERT.family
BIG = 10**3000  # a size with 3,000 digits: valid (under 4,300), its square is not printable as an int
DIGITS = "9" * 5000

#: the folder of hostile files, set by the fixture ``hostile`` before any call runs (the calls name F / "...")
F = Path("/nonexistent-until-the-fixture-runs")


def _deep(depth: int):
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


DEEP = _deep(100_000)

TEMPLATES = {
    "syntax.j2": "{% if %}x{% endif %}",
    "undefined.j2": "{{ nosuch }}",
    "mro.j2": "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "globals.j2": "{{ cycler.__init__.__globals__ }}",
    "include.j2": "{% include '/etc/passwd' %}",
    "import.j2": "{% import 'os' as os %}{{ os.system('touch pwned') }}",
    "mutate.j2": "{{ t.update({'x': 1}) }}",
    "lipsum.j2": "{{ lipsum(1000000) }}",
    "center-bomb.j2": '{{ "x".center(1000000000)|length }}',
    # 4 GB: the child may use its address space plus 256 MiB, and a long-lived test worker's heap can hold
    # 512 MB of freed but mapped memory (the bomb at 512 MB once rendered there)
    "concat-bomb.j2": '{% set a = "x" * 1000000 %}{% set b = a ~ a ~ a ~ a ~ a ~ a ~ a ~ a %}'
                      "{% set c = b ~ b ~ b ~ b ~ b ~ b ~ b ~ b %}{% set d = c ~ c ~ c ~ c ~ c ~ c ~ c ~ c %}"
                      "{% set e = d ~ d ~ d ~ d ~ d ~ d ~ d ~ d %}{{ e|length }}",
    "loops-silent.j2": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
}


@pytest.fixture(scope="session")
def hostile(tmp_path_factory):
    """The files the calls read: templates, configs, a FIFO, a folder without config.json, a huge file."""
    global F
    F = tmp_path_factory.mktemp("hostile")
    for name, text in TEMPLATES.items():
        (F / name).write_text(text)
    os.mkfifo(F / "fifo")
    (F / "emptydir").mkdir()
    (F / "big.j2").write_text("x" * (2 << 20))
    (F / "latin1.j2").write_bytes(b"caf\xe9 {{ title }}")
    (F / "malformed.json").write_text('{"model_type": "bert"')
    (F / "list.json").write_text("[]")
    (F / "heads7").mkdir()
    (F / "heads7" / "config.json").write_text(json.dumps({"model_type": "bert", "num_attention_heads": 7}))
    return F


def _case(id_, call, needle=None):
    return (id_, call, needle)


# -- the table ---------------------------------------------------------------------------------------------------

MODEL_CALLS = [
    _case("model(None)", lambda: model(None)),
    _case("model(123)", lambda: model(123)),
    _case("model(b'bert-base')", lambda: model(b"bert-base")),
    _case("model([])", lambda: model([])),
    _case("model('')", lambda: model("")),
    _case("model('nosuchmodel')", lambda: model("nosuchmodel"), "nosuchmodel"),
    _case("model('nosuch.json')", lambda: model("nosuch.json"), "nosuch.json"),
    _case("model(Path(missing config.json))", lambda: model(F / "missing" / "config.json"), "missing"),
    _case("model(folder without config.json)", lambda: model(F / "emptydir"), "emptydir"),
    _case("model('/dev/zero')", lambda: model("/dev/zero"), "/dev/zero"),
    _case("model(FIFO)", lambda: model(str(F / "fifo")), "fifo"),
    _case("model(malformed config.json)", lambda: model(F / "malformed.json"), "malformed"),
    _case("model(config.json of a list)", lambda: model(F / "list.json"), "list.json"),
    _case("model(config folder, A does not divide H)", lambda: model(F / "heads7"), "7"),
    _case("model(bert-base, H=0)", lambda: model("bert-base", H=0), "H"),
    _case("model(bert-base, H=-1)", lambda: model("bert-base", H=-1), "H"),
    _case("model(bert-base, H=1.5)", lambda: model("bert-base", H=1.5), "H"),
    _case("model(bert-base, H=768.0)", lambda: model("bert-base", H=768.0), "H"),
    _case("model(bert-base, H=True)", lambda: model("bert-base", H=True), "H"),
    _case("model(bert-base, H='abc')", lambda: model("bert-base", H="abc"), "H"),
    _case("model(bert-base, H='٣')", lambda: model("bert-base", H="٣"), "H"),
    _case("model(bert-base, H=nan)", lambda: model("bert-base", H=float("nan")), "H"),
    _case("model(bert-base, H=inf)", lambda: model("bert-base", H=float("inf")), "H"),
    _case("model(bert-base, H=10**5000)", lambda: model("bert-base", H=10**5000), "H"),
    _case("model(bert-base, H='9'*5000)", lambda: model("bert-base", H=DIGITS), "H"),
    _case("model(bert-base, H=Rational(3, 2))", lambda: model("bert-base", H=sp.Rational(3, 2)), "H"),
    _case("model(bert-base, H=Fraction(3, 2))", lambda: model("bert-base", H=Fraction(3, 2)), "H"),
    _case("model(bert-base, H=sympy.oo)", lambda: model("bert-base", H=sp.oo), "H"),
    _case("model(bert-base, H=Symbol('x'))", lambda: model("bert-base", H=sp.Symbol("x")), "H"),
    _case("model(bert-base, H=Decimal(768))", lambda: model("bert-base", H=Decimal(768)), "H"),
    _case("model(bert-base, H=[768])", lambda: model("bert-base", H=[768]), "H"),
    _case("model(bert-base, H=768j)", lambda: model("bert-base", H=768j), "H"),
    _case("model(bert-base, H=object())", lambda: model("bert-base", H=object()), "H"),
    _case("model(bert-base, r=0)", lambda: model("bert-base", r=0), "r"),
    _case("model(bert-base, r=-1)", lambda: model("bert-base", r=-1), "r"),
    _case("model(bert-base, r=0.5)", lambda: model("bert-base", r=0.5), "r"),
    _case("model(bert-base, r='1/0')", lambda: model("bert-base", r="1/0"), "r"),
    _case("model(bert-base, r='1e5000')", lambda: model("bert-base", r="1e5000"), "r"),
    _case("model(bert-base, r=1/7)", lambda: model("bert-base", r=Fraction(1, 7)), "r"),
    _case("model(bert-base, A=7)", lambda: model("bert-base", A=7), "A=7"),
    _case("model(bert-base, Q=1)", lambda: model("bert-base", Q=1), "Q"),
    _case("model(bert-base, **{'': 1})", lambda: model("bert-base", **{"": 1})),
    _case("model(bert-base, E=128)", lambda: model("bert-base", E=128), "E"),
    _case("model(bert-base, pooler='maybe')", lambda: model("bert-base", pooler="maybe"), "pooler"),
    _case("model(bert-base, pooler=2)", lambda: model("bert-base", pooler=2), "pooler"),
    _case("model(bert-base, pooler=[])", lambda: model("bert-base", pooler=[]), "pooler"),
    _case("model(bert-base, head='nosuch')", lambda: model("bert-base", head="nosuch"), "nosuch"),
    _case("model(bert-base, head=1)", lambda: model("bert-base", head=1)),
    _case("model(bert-base, head=[])", lambda: model("bert-base", head=[])),
    _case("model(llama-3-8b, G=3)", lambda: model("llama-3-8b", G=3), "G"),
    _case("model(electra-small, E=256)", lambda: model("electra-small", E=256)),
    _case("model(transformer-base, positions='rope')", lambda: model("transformer-base", positions="rope"),
          "positions"),
    _case("model(albert-base-v2, hidden_groups=0)", lambda: model("albert-base-v2", hidden_groups=0), "hidden_groups"),
    _case("model(albert-base-v2, hidden_groups='9'*5000)", lambda: model("albert-base-v2", hidden_groups=DIGITS),
          "hidden_groups"),
    _case("model(albert-base-v2, hidden_groups=10**5000)", lambda: model("albert-base-v2", hidden_groups=10**5000),
          "hidden_groups"),
    _case("model('bert').count", lambda: model("bert").count, "bert"),
    _case("model({})", lambda: model({}), "model_type"),
    _case("model({model_type: nosuch})", lambda: model({"model_type": "nosuch"}), "nosuch"),
    _case("model({hidden_size: '768'})", lambda: model({"model_type": "bert", "hidden_size": "768"}), "hidden_size"),
    _case("model({hidden_size: 768.0})", lambda: model({"model_type": "bert", "hidden_size": 768.0}), "hidden_size"),
    _case("model({hidden_size: -1})", lambda: model({"model_type": "bert", "hidden_size": -1}), "hidden_size"),
    _case("model({num_attention_heads: 7})", lambda: model({"model_type": "bert", "num_attention_heads": 7}), "7"),
    _case("model({num_labels: 10**5000}, head=...)", lambda: model(
        {"model_type": "bert", "num_labels": 10**5000}, head="sequence-classification")),
    _case("symparams.Model('bert')", lambda: symparams.Model("bert"), "Family"),
    _case("symparams.Model(family, values=[('H', 1)])", lambda: symparams.Model(FAMILY, [("H", 1)])),
    _case("symparams.Model(family, switches='x')", lambda: symparams.Model(FAMILY, {}, "x")),
]

MODEL_METHOD_CALLS = [
    _case("m.subs(H=0)", lambda: BERT.subs(H=0), "H"),
    _case("m.subs(A=7)", lambda: BERT.subs(A=7), "7"),
    _case("m.subs(Q=1)", lambda: BERT.subs(Q=1), "Q"),
    _case("m.subs(pooler=False)", lambda: BERT.subs(pooler=False), "pooler"),
    _case("m.subs(H='7.68e1')", lambda: BERT.subs(H="7.68e1"), "H"),
    _case("m.subs(H=numpy.int64(-1))", lambda: BERT.subs(H=__import__("numpy").int64(-1)), "H"),
    _case("m.with_switches(bogus=True)", lambda: BERT.with_switches(bogus=True), "bogus"),
    _case("m.with_switches(pooler='maybe')", lambda: BERT.with_switches(pooler="maybe"), "pooler"),
    _case("m.with_switches(H=768)", lambda: BERT.with_switches(H=768), "H"),
    _case("transformer.with_switches(positions='rope')",
          lambda: model("transformer-base").with_switches(positions="rope"), "positions"),
    _case("m.evaluate('__import__(os).system(touch pwned)')",
          lambda: BERT.evaluate("__import__('os').system('touch pwned')")),
    _case("m.evaluate('H*2')", lambda: BERT.evaluate("H*2")),
    _case("m.evaluate('')", lambda: BERT.evaluate("")),
    _case("m.evaluate(1.5)", lambda: BERT.evaluate(1.5)),
    _case("m.evaluate(None)", lambda: BERT.evaluate(None)),
    _case("m.evaluate([])", lambda: BERT.evaluate([])),
    _case("m.evaluate(True)", lambda: BERT.evaluate(True)),
    _case("m.block('nope')", lambda: BERT.block("nope"), "nope"),
    _case("m.block(None)", lambda: BERT.block(None)),
    _case("m.block('')", lambda: BERT.block("")),
    _case("m.block('encoder..layer')", lambda: BERT.block("encoder..layer")),
    _case("m.block(b'encoder')", lambda: BERT.block(b"encoder")),
    _case("list(m.rows(0))", lambda: list(BERT.rows(0)), "0"),
    _case("list(m.rows(-1))", lambda: list(BERT.rows(-1))),
    _case("list(m.rows(1.5))", lambda: list(BERT.rows(1.5))),
    _case("list(m.rows('2'))", lambda: list(BERT.rows("2"))),
    _case("list(m.rows(True))", lambda: list(BERT.rows(True))),
    _case("model('bert').breakdown() then .count", lambda: (model("bert").breakdown(), model("bert").count)),
    _case("m.derive(format='pdf')", lambda: BERT.derive(format="pdf"), "pdf"),
    _case("m.derive(format=None)", lambda: BERT.derive(format=None)),
    _case("m.derive(lang='fr')", lambda: BERT.derive(lang="fr"), "fr"),
    _case("m.derive(template=missing)", lambda: BERT.derive(template=str(F / "missing.j2")), "missing.j2"),
    _case("m.derive(template=syntax error)", lambda: BERT.derive(template=str(F / "syntax.j2")), "syntax.j2"),
    _case("m.derive(template=1)", lambda: BERT.derive(template=1)),
    _case("model('bert').derive()", lambda: model("bert").derive(), "bert"),
    *[_case(f"m.lora({r!r}, ['query'])", lambda r=r: BERT.lora(r, ["query"]).trainable, "rank")
      for r in (0, -1, 1.5, "abc", True, None, [8], "1e999999")],
    *[_case(f"m.lora(8, {t!r})", lambda t=t: BERT.lora(8, t).trainable)
      for t in (None, [], [3], [None], "", "query,,key", b"query", {"query": 1}, 7, ["layer.0.query"], ["bogus"],
                ["LayerNorm"], ["attention"], "all-linears")],
    _case("m.lora(8, ['query'], dora='yes')", lambda: BERT.lora(8, ["query"], dora="yes"), "yes"),
    _case("m.lora(8, ['query'], bias='some')", lambda: BERT.lora(8, ["query"], bias="some"), "some"),
    _case("model('bert').lora(8, ['query']).trainable", lambda: model("bert").lora(8, ["query"]).trainable, "V"),
]

SOLVE_CALLS = [
    _case("solve(m, 0, 'H')", lambda: solve(BERT, 0, "H"), "target"),
    _case("solve(m, -5, 'H')", lambda: solve(BERT, -5, "H"), "target"),
    _case("solve(m, 1.5, 'H')", lambda: solve(BERT, 1.5, "H"), "target"),
    _case("solve(m, 'abc', 'H')", lambda: solve(BERT, "abc", "H"), "target"),
    _case("solve(m, '1e100000', 'H')", lambda: solve(BERT, "1e100000", "H")),
    _case("solve(m, None, 'H')", lambda: solve(BERT, None, "H"), "target"),
    _case("solve(m, inf, 'H')", lambda: solve(BERT, float("inf"), "H"), "target"),
    _case("solve(m, nan, 'H')", lambda: solve(BERT, float("nan"), "H"), "target"),
    _case("solve(m, True, 'H')", lambda: solve(BERT, True, "H"), "target"),
    _case("solve(m, [1], 'H')", lambda: solve(BERT, [10**9], "H"), "target"),
    _case("solve(m, 1e9, 'Q')", lambda: solve(BERT, 1e9, "Q"), "Q"),
    _case("solve(m, 1e9, 'pooler')", lambda: solve(BERT, 1e9, "pooler"), "pooler"),
    _case("solve(m, 1e9, 'E')", lambda: solve(BERT, 1e9, "E"), "E"),
    _case("solve(m, 1e9, 'A')", lambda: solve(BERT, 1e9, "A"), "A"),
    _case("solve(m, 1e9, None)", lambda: solve(BERT, 1e9, None)),
    _case("solve(m, 1e9, ['H'])", lambda: solve(BERT, 1e9, ["H"])),
    _case("solve('nosuchmodel', 1e9, 'H')", lambda: solve("nosuchmodel", 1e9, "H"), "nosuchmodel"),
    _case("solve(None, 1e9, 'H')", lambda: solve(None, 1e9, "H")),
    _case("solve(model('bert'), 1e9, 'H')", lambda: solve(model("bert"), 1e9, "H")),
]

SWEEP_CALLS = [
    _case("sweep(m)", lambda: sweep(BERT), "grid"),
    _case("sweep(m, H='1:2:0')", lambda: sweep(BERT, H="1:2:0"), "step"),
    _case("sweep(m, H='')", lambda: sweep(BERT, H="")),
    _case("sweep(m, H=[])", lambda: sweep(BERT, H=[])),
    _case("sweep(m, H='768,,1024')", lambda: sweep(BERT, H="768,,1024")),
    _case("sweep(m, H=range(0, 10))", lambda: sweep(BERT, H=range(0, 10))),  # noqa: PIE808
    _case("sweep(m, H=range(10, 0, -1))", lambda: sweep(BERT, H=range(10, 0, -1))),
    _case("sweep(m, H=range(1, 10**12))", lambda: sweep(BERT, H=range(1, 10**12)), "10^9"),
    _case("sweep(m, H=range(1, 10**20))", lambda: sweep(BERT, H=range(1, 10**20))),
    _case("sweep(m, H=range(1, 10**20), force=True)", lambda: sweep(BERT, H=range(1, 10**20), force=True)),
    _case("sweep(m, H=5)", lambda: sweep(BERT, H=5)),
    _case("sweep(m, H=None)", lambda: sweep(BERT, H=None)),
    _case("sweep(m, H=b'1,2')", lambda: sweep(BERT, H=b"1,2")),
    _case("sweep(m, H=['abc'])", lambda: sweep(BERT, H=["abc"])),
    _case("sweep(m, H=[1.5])", lambda: sweep(BERT, H=[1.5])),
    _case("sweep(m, H=[10**5000])", lambda: sweep(BERT, H=[10**5000])),
    _case("sweep(m, Q='1,2')", lambda: sweep(BERT, Q="1,2"), "Q"),
    _case("sweep(m, pooler='true,false')", lambda: sweep(BERT, pooler="true,false"), "pooler"),
    _case("sweep(m, E='1,2')", lambda: sweep(BERT, E="1,2"), "E"),
    _case("sweep(m, {'H': '768'}, H='1024')", lambda: sweep(BERT, {"H": "768"}, H="1024"), "H"),
    _case("sweep(m, H='768', chunk=0)", lambda: sweep(BERT, H="768", chunk=0), "chunk"),
    _case("sweep(m, H='768', chunk=True)", lambda: sweep(BERT, H="768", chunk=True), "chunk"),
    _case("sweep(m, r='3:4:1/0')", lambda: sweep(BERT, r="3:4:1/0"), "r"),
    _case("sweep(m, 'H=1:2')", lambda: sweep(BERT, "H=1:2")),
    _case("sweep(m, 5)", lambda: sweep(BERT, 5)),
    _case("sweep('nosuchmodel', H='1,2')", lambda: sweep("nosuchmodel", H="1,2"), "nosuchmodel"),
    _case("sweep(None, H='1,2')", lambda: sweep(None, H="1,2")),
    _case("sweep(model('bert'), H='768')", lambda: sweep(model("bert"), H="768")),
]

SETTINGS_CALLS = [
    _case("settings([])", lambda: settings([])),
    _case("settings('bert')", lambda: settings("bert")),
    _case("settings(None)", lambda: settings(None)),
    _case("settings({})", lambda: settings({}), "model_type"),
    _case("settings({model_type: None})", lambda: settings({"model_type": None}), "model_type"),
    _case("settings({model_type: 5})", lambda: settings({"model_type": 5}), "model_type"),
    _case("settings({model_type: 'nosuch'})", lambda: settings({"model_type": "nosuch"}), "nosuch"),
    _case("settings({model_type: object()})", lambda: settings({"model_type": object()}), "model_type"),
    _case("settings({model_type: b'bert'})", lambda: settings({"model_type": b"bert"}), "model_type"),
    _case("settings({hidden_size: '768'})", lambda: settings({"model_type": "bert", "hidden_size": "768"}),
          "hidden_size"),
    _case("settings({hidden_size: 768.0})", lambda: settings({"model_type": "bert", "hidden_size": 768.0}),
          "hidden_size"),
    _case("settings({hidden_size: True})", lambda: settings({"model_type": "bert", "hidden_size": True}),
          "hidden_size"),
    _case("settings({hidden_size: 0})", lambda: settings({"model_type": "bert", "hidden_size": 0}), "hidden_size"),
    _case("settings({hidden_size: nan})", lambda: settings({"model_type": "bert", "hidden_size": float("nan")}),
          "hidden_size"),
    _case("settings({hidden_size: object()})", lambda: settings({"model_type": "bert", "hidden_size": object()}),
          "hidden_size"),
    _case("settings({hidden_size: {1, 2}})", lambda: settings({"model_type": "bert", "hidden_size": {1, 2}}),
          "hidden_size"),
    _case("settings({hidden_size: nested 100000 deep})",
          lambda: settings({"model_type": "bert", "hidden_size": DEEP}), "hidden_size"),
    _case("settings({num_labels: 0})", lambda: settings({"model_type": "bert", "num_labels": 0}), "num_labels"),
    _case("settings({id2label: []})", lambda: settings({"model_type": "bert", "id2label": []}), "id2label"),
    _case("settings({add_cross_attention: True})",
          lambda: settings({"model_type": "bert", "add_cross_attention": True}), "add_cross_attention"),
    _case("settings(bart decoder heads 0)", lambda: settings({"model_type": "bart", "decoder_attention_heads": 0}),
          "decoder_attention_heads"),
    _case("settings(llama kv heads 3)", lambda: settings({"model_type": "llama", "num_key_value_heads": 3}),
          "num_key_value_heads"),
    _case("settings(llama head_dim 63)", lambda: settings({"model_type": "llama", "head_dim": 63}), "head_dim"),
    _case("settings(t5 feed_forward_proj)", lambda: settings({"model_type": "t5", "feed_forward_proj": "a-b-c"}),
          "feed_forward_proj"),
    _case("settings(marian pad_token_id)", lambda: settings({"model_type": "marian", "pad_token_id": 10**8}),
          "pad_token_id"),
    _case("settings({...}, head='nosuch')", lambda: settings({"model_type": "bert"}, head="nosuch"), "nosuch"),
    _case("settings({...}, overrides={'Q': 1})", lambda: settings({"model_type": "bert"}, overrides={"Q": 1}), "Q"),
    _case("settings({...}, overrides={'pooler': 'maybe'}) then model",
          lambda: model({"model_type": "bert"}, pooler="maybe"), "pooler"),
    _case("settings({...}, overrides='H=768')", lambda: settings({"model_type": "bert"}, overrides="H=768")),
    _case("settings({...}, source=None)", lambda: settings({"model_type": "bert"}, source=None)),
]

RENDER_CALLS = [
    _case("render(m, format='pdf')", lambda: render(BERT, format="pdf"), "pdf"),
    _case("render(m, format='MD')", lambda: render(BERT, format="MD"), "MD"),
    _case("render(m, format=[])", lambda: render(BERT, format=[])),
    _case("render(m, lang='fr')", lambda: render(BERT, lang="fr"), "fr"),
    _case("render(m, lang=None)", lambda: render(BERT, lang=None)),
    _case("render(None)", lambda: render(None)),
    _case("render(m, template=1)", lambda: render(BERT, template=1)),
    _case("render(m, template=missing)", lambda: render(BERT, template=str(F / "missing.j2")), "missing.j2"),
    _case("render(m, template=folder)", lambda: render(BERT, template=str(F / "emptydir")), "emptydir"),
    _case("render(m, template=FIFO)", lambda: render(BERT, template=str(F / "fifo")), "fifo"),
    _case("render(m, template='/dev/zero')", lambda: render(BERT, template="/dev/zero"), "/dev/zero"),
    _case("render(m, template=2 MiB)", lambda: render(BERT, template=str(F / "big.j2")), "big.j2"),
    _case("render(m, template=not UTF-8)", lambda: render(BERT, template=str(F / "latin1.j2")), "latin1.j2"),
    *[_case(f"render(m, {fmt!r}, template={name})", lambda fmt=fmt, name=name: render(
        BERT, format=fmt, template=str(F / name)), name)
      for fmt, name in zip(("md", "tex", "html") * 4, TEMPLATES)],
]

CALLS = [*MODEL_CALLS, *MODEL_METHOD_CALLS, *SOLVE_CALLS, *SWEEP_CALLS, *SETTINGS_CALLS, *RENDER_CALLS]

#: valid but extreme: a result or a SymparamsError, within the limits
EXTREME = [
    _case("str(model(bert-base, H=10**3000, A=1).breakdown())",
          lambda: str(model("bert-base", H=BIG, A=1).breakdown())),
    _case("model(bert-base, H=10**3000, A=1).total", lambda: model("bert-base", H=BIG, A=1).total),
    _case("str(model(bert-base, H=10**3000, A=1).prove())", lambda: str(model("bert-base", H=BIG, A=1).prove())),
    _case("model(bert-base, H=2**4000, A=1).prove()", lambda: model("bert-base", H=2**4000, A=1).prove()),
    _case("model(bert-base, H=10**3000, A=1).derive()", lambda: model("bert-base", H=BIG, A=1).derive()),
    _case("list(sweep(m, H=[10**3000], A=[1]))", lambda: list(sweep(BERT, H=[BIG], A=[1]))),
    _case("solve(m, 10**4299, 'H')", lambda: solve(BERT, 10**4299, "H")),
]


#: calls that fail because of a bug in the package (id -> what goes wrong); marked xfail(strict=True)
XFAIL: dict = {}


# -- running a call ------------------------------------------------------------------------------------------------

def _tree(folder: Path) -> dict:
    out = {}
    for path, dirs, files in os.walk(folder):
        for name in dirs + files:
            full = os.path.join(path, name)
            st = os.lstat(full)
            digest = None
            if stat.S_ISREG(st.st_mode):
                with open(full, "rb") as fh:
                    digest = hash(fh.read())
            out[os.path.relpath(full, folder)] = (stat.S_IFMT(st.st_mode), st.st_mode, digest)
    return out


def _rss_kb() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)


def _child(call, work: str, report: int, log: str) -> None:
    """In the forked child: run ``call`` in ``work``; write what happened to the pipe ``report``."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.chdir(work)
    with open("/proc/self/status") as fh:
        size = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (size + (2 << 30), resource.RLIM_INFINITY))
    before = _rss_kb()
    result = {"raised": None}
    try:
        value = call()
        if hasattr(value, "__next__"):  # a generator raises when iterated
            list(value)
    except BaseException as exc:  # noqa: BLE001 -- everything is reported, then judged
        result = {"raised": f"{type(exc).__module__}.{type(exc).__qualname__}",
                  "symparams": isinstance(exc, symparams.SymparamsError), "message": str(exc)[:2000],
                  "where": "".join(traceback.format_exception(exc))[-1500:]}
    result["growth_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    os.write(report, json.dumps(result).encode())


def run_call(call, tmp: Path) -> dict:
    work = tmp / "work"
    work.mkdir()
    log = tmp / "output"
    trees = (_tree(work), _tree(F))
    read, write = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(read)
            _child(call, str(work), write, str(log))
        finally:
            os._exit(0)
    os.close(write)
    data, timed_out = b"", False
    while True:
        left = start + CALL_SECONDS - time.monotonic()
        ready, _, _ = select.select([read], [], [], max(left, 0))
        if not ready:
            timed_out = True
            os.kill(pid, signal.SIGKILL)
            break
        chunk = os.read(read, 1 << 16)
        if not chunk:
            break
        data += chunk
    os.close(read)
    os.waitpid(pid, 0)
    seconds = time.monotonic() - start
    result = json.loads(data) if data and not timed_out else {"raised": "nothing reported"}
    result.update(seconds=seconds, timed_out=timed_out, output=log.read_text(errors="replace") if log.exists() else "",
                  changed=(_tree(work), _tree(F)) != trees)
    return result


def problems(result: dict, needle, extreme: bool) -> list:
    found = []
    if result["timed_out"]:
        found.append(f"still running after {CALL_SECONDS} s: killed")
    if result.get("growth_kb", 0) > GROWTH_KB:
        found.append(f"memory grew by {result['growth_kb'] // 1024} MB")
    if result["changed"]:
        found.append("a file was created or changed")
    if "Traceback" in result["output"]:
        found.append("a traceback was printed")
    raised = result["raised"]
    if raised is None:
        if not extreme:
            found.append("no exception: the call returned")
        return found
    if raised == "nothing reported":
        return found or ["the child reported nothing"]
    if not result["symparams"]:
        found.append(f"raised {raised}, not SymparamsError: {result['message'][:300]!r}\n{result['where']}")
        return found
    message = result["message"]
    if not message or len(message.splitlines()) != 1:
        found.append(f"the message is not one line: {message!r}")
    if needle is not None and needle not in message:
        found.append(f"the message does not name {needle!r}: {message!r}")
    return found


def _params(cases):
    return [pytest.param(call, needle, id=id_, marks=[pytest.mark.xfail(strict=True, reason=XFAIL[id_])]
                         if id_ in XFAIL else []) for id_, call, needle in cases]


def test_the_table_is_large_and_every_xfail_names_a_call():
    ids = [id_ for id_, _, _ in [*CALLS, *EXTREME]]
    assert len(ids) == len(set(ids))
    assert len(CALLS) >= 60
    assert set(XFAIL) <= set(ids), set(XFAIL) - set(ids)


@pytest.mark.parametrize("call,needle", _params(CALLS))
def test_a_bad_call_raises_one_line_symparams_error(call, needle, hostile, tmp_path):
    result = run_call(call, tmp_path)
    found = problems(result, needle, extreme=False)
    assert not found, "\n".join(found) + f"\n({result['seconds']:.1f} s, memory +{result.get('growth_kb')} kB)"


@pytest.mark.parametrize("call,needle", _params(EXTREME))
def test_an_extreme_call_returns_or_raises_symparams_error(call, needle, hostile, tmp_path):
    result = run_call(call, tmp_path)
    found = problems(result, needle, extreme=True)
    assert not found, "\n".join(found) + f"\n({result['seconds']:.1f} s, memory +{result.get('growth_kb')} kB)"


@pytest.mark.parametrize("fmt", ["md", "tex", "html"])
def test_render_drops_c0_control_characters_from_the_title(fmt):
    """Not an error: the title is text; the C0 controls never reach a document."""
    text = render(BERT, format=fmt, title="a\x01b\x1bc\x7fd")
    assert "abcd" in text and not any(c in text for c in "\x01\x1b\x7f")


@pytest.mark.parametrize("fmt", ["md", "tex", "html"])
def test_render_drops_c1_control_characters_from_the_title(fmt):
    text = render(BERT, format=fmt, title="a\x85b\x9bc")
    assert not any(c in text for c in "\x85\x9b")
