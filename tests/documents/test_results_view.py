"""Results shown as reports: the command line's text, and the HTML, Markdown and one-line repr a notebook shows,
each with the numbers the result computes (Llama-3-8B's cache and BERT-base's weights worked out by hand)."""

import html
import re

import pytest

from symparams import model
from symparams.cli import main
from symparams.documents.results_view import report

LLAMA_KV_PER_TOKEN = 2 * 8 * 128 * 32 * 2  # keys and values × G = 8 heads × D = 128 × L = 32 layers × 2 bytes
BERT_WEIGHTS = 109_482_240 * 2  # BERT-base's published count, bf16


def _numbers(text: str) -> set:
    return {int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", html.unescape(text)) if n[-1] != ","}


@pytest.mark.parametrize("make,expected", [
    (lambda: model("llama-3-8b").kv_cache("bf16", seq=4096, batch=2),
     {LLAMA_KV_PER_TOKEN, LLAMA_KV_PER_TOKEN * 4096 * 2}),
    (lambda: model("bert-base").memory("bf16", "adam"), {BERT_WEIGHTS, BERT_WEIGHTS * (1 + 1 + 6)}),
    (lambda: model("gpt2").explain("117M"), {124_439_808, 123_532_032, 117_000_000}),
], ids=["kv cache", "memory", "explain"])
def test_every_face_of_a_result_shows_its_numbers(make, expected):
    result = make()
    for shown in (str(result), result._repr_html_(), result._repr_markdown_()):
        assert expected <= _numbers(shown), shown[:300]
    assert result._repr_latex_() is None  # a table: Jupyter takes the HTML
    assert repr(result).startswith(f"<{type(result).__name__} ") or repr(result).startswith("Ledger(")


def test_flops_show_forward_backward_and_training_as_the_counter_does():
    f = model("bert-base").flops(128)
    assert f.backward == 2 * f.forward and f.training == 3 * f.forward  # the conventions' backward = 2 × forward
    shown = _numbers(f._repr_html_())
    assert {f.forward, f.backward, f.training} <= shown
    assert {f.forward // 2, f.training // 2} <= _numbers(report(f, macs=True).text())
    assert repr(f) == f"<Flops bert-base: forward {f.forward:,}, training {f.training:,} (seq=128, batch=1)>"


def test_the_command_line_prints_the_report(capsys):
    assert main(["memory", "bert-base"]) == 0
    assert capsys.readouterr().out == str(model("bert-base").memory("bf16", "adam")) + "\n"
    assert main(["explain", "gpt2", "--claim", "117M"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1:] == str(model("gpt2").explain("117M")).splitlines()


def test_a_config_folder_name_is_escaped_in_the_html(tmp_path):
    from symparams.families.lookup import from_config

    folder = tmp_path / "<img src=x onerror=alert(1)>"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "bert", "num_hidden_layers": 2}')
    m = from_config(str(folder))
    for result in (m.memory("bf16", "adam"), m.kv_cache("bf16"), m.flops(16)):
        assert "<img" not in result._repr_html_() and "&lt;img" in result._repr_html_()


def test_a_solution_and_a_sweep_show_their_rows():
    from symparams.analysis.solve import solve
    from symparams.analysis.sweep import sweep

    # BERT-large's count, 335,141,888 (L = 24, H = 1024, A = 16), solved for L at BERT-base's width: L = 44 is
    # nearest, as 768·(12·768·L + …) grows by 7,087,872 a layer
    solution = solve(model("bert-base"), 335_141_888, "L")
    assert repr(solution) == "<Solution bert-base: L = 44 gives 336,294,144>"
    for shown in (solution._repr_html_(), solution._repr_markdown_()):
        assert {43, 44, 45, 329_206_272, 336_294_144, 343_382_016} <= _numbers(shown)
    grid = sweep(model("bert-base"), {"L": "1:100:1", "H": "768,1024"})
    assert repr(grid) == "<Sweep bert-base: parameters over L (100 values), H (2 values), 200 points>"
    html_rows = grid._repr_html_().count("<tr>") - 1  # less the header
    assert html_rows == 50 and "the first 50 of 200 points" in grid._repr_html_()
    assert 31_515_648 in _numbers(grid._repr_markdown_())  # L = 1 at H = 768: BERT-base's one-layer count
