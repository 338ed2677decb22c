"""What every generated document says of its own displays and tables holds, in both languages.

The documents are read as docs/ holds them (test_regenerate.py keeps it equal
to a fresh rendering): the head-count table against the model counted again
at each head count (``count --set A=…``), the verdict on the heads against the
derivative the document prints, the sentence before N(A) against the display
after it, and the punctuation of the prose.
"""

import re
from functools import lru_cache

import pytest

from symparams import model
from tests.reference import ROOT

DOCS = ROOT / "docs"
MD = sorted(p for p in DOCS.iterdir() if re.match(r".+\.(en|zh)\.md$", p.name))
TEX = sorted(p for p in DOCS.iterdir() if re.match(r".+\.(en|zh)\.tex$", p.name))


def preset(path) -> str:
    return path.name.rsplit(".", 2)[0]


def lang(path) -> str:
    return path.name.rsplit(".", 2)[1]


# -- the head-count table -------------------------------------------------------------------------------------

#: rows of the head-count table: Markdown ``| A | total |``, LaTeX ``A & total \\`` (up to three pairs a row)
_ROW = {"md": re.compile(r"^\|((?: \d+ \| [\d,]+ \|)+)$", re.M),
        "tex": re.compile(r"^(\d+ & [\d,]+(?: & \d+ & [\d,]+)*) \\\\$", re.M)}


def head_rows(text: str, fmt: str) -> list[tuple[int, int]]:
    """(A, total) of every row of the document's head-count tables."""
    cells = [c.strip() for row in _ROW[fmt].findall(text) for c in re.split(r"[|&]", row) if c.strip()]
    return [(int(a), int(n.replace(",", ""))) for a, n in zip(cells[::2], cells[1::2])]


@lru_cache(maxsize=None)
def counted(name: str, heads: int) -> int:
    return model(name, A=heads).count


def wrong_head_rows(name: str, text: str, fmt: str) -> list[tuple[int, int, int]]:
    """(A, the row's total, the count at A) of every row the count at its A does not give."""
    return [(a, n, counted(name, a)) for a, n in head_rows(text, fmt) if counted(name, a) != n]


def test_every_head_count_row_is_the_count_at_that_head_count():
    assert not {p.name: w for p in MD + TEX if (w := wrong_head_rows(preset(p), p.read_text(encoding="utf-8"),
                                                                        p.suffix[1:]))}


def test_the_head_table_is_read_and_its_check_can_fail():
    llama = (DOCS / "llama-3-8b.en.md").read_text(encoding="utf-8")
    assert head_rows(llama, "md") == [(32, 7_504_924_672), (64, 7_370_706_944)]
    bert = (DOCS / "bert-base.zh.tex").read_text(encoding="utf-8")
    assert len(head_rows(bert, "tex")) == 18 and (768, 109_482_240) in head_rows(bert, "tex")
    # a row that repeated the model's own total (as a count that forgot A would) is found
    wrong = llama.replace("| 64 | 7,370,706,944 |", "| 64 | 7,504,924,672 |")
    assert wrong_head_rows("llama-3-8b", wrong, "md") == [(64, 7_504_924_672, 7_370_706_944)]


# -- the verdict on the heads against the derivative printed --------------------------------------------------

_INVARIANT = {"en": ["does not depend on the number of attention heads", "does not depend on $A$."],
              "zh": ["并且与注意力头数无关", "的参数量跟注意力头的个数 $A$ 并没有关联"]}
_DEPENDENT = {"en": ["here it does depend on the number of attention heads"], "zh": ["它与注意力头数有关"]}
_LIKE = {"en": "as for the parameter count", "zh": "和参数量的情形一样"}
_UNLIKE = {"en": "although the parameter count, held the same way, still depends on",
           "zh": "而参数量在同样固定时仍与"}
_DERIVATIVE = re.compile(r"\$\$\\frac\{\\partial N\}\{\\partial A\} = ([^$]+)\$\$")


def verdicts_hold(text: str, lg: str) -> bool:
    """The first ∂N/∂A a document prints is of its count; the last, where it holds G/A or A·D fixed, of the
    count held so: the verdicts and the FLOPs' "as for the parameter count" must agree with them."""
    derivatives = [d.strip() for d in _DERIVATIVE.findall(text)]
    totals = {n for _, n in head_rows(text, "md")}
    held = derivatives[-1] if len(derivatives) > 1 else None
    return ((not any(s in text for s in _INVARIANT[lg]) or (derivatives[0] == "0" and len(totals) <= 1))
            and (not any(s in text for s in _DEPENDENT[lg]) or (derivatives[0] != "0" and len(totals) == 2))
            and (_LIKE[lg] not in text or held == "0")
            and (_UNLIKE[lg] not in text or held not in (None, "0")))


def test_a_sentence_on_the_heads_says_what_the_derivative_printed_says():
    assert not [p.name for p in MD if not verdicts_hold(p.read_text(encoding="utf-8"), lang(p))]


def test_the_verdicts_are_found_where_they_are_printed():
    t5, bert, llama = ((DOCS / f"{n}.zh.md").read_text(encoding="utf-8")
                       for n in ("t5-base", "bert-base", "llama-3-8b"))
    assert all(s in bert for s in _INVARIANT["zh"]) and _DEPENDENT["zh"][0] in t5 and _UNLIKE["zh"] in t5
    assert _LIKE["zh"] in llama and [d.strip() for d in _DERIVATIVE.findall(llama)][-1] == "0"
    assert [d.strip() for d in _DERIVATIVE.findall(t5)] == ["2 B + 12 D H L", "2 B"]
    # T5's FLOPs sentence as it was printed before (A·D held, ∂N/∂A = 2B), and a verdict against ∂N/∂A ≠ 0
    assert verdicts_hold(t5, "zh") and not verdicts_hold(t5.replace(_UNLIKE["zh"], _LIKE["zh"]), "zh")
    assert not verdicts_hold(llama.replace("它与注意力头数有关", "并且与注意力头数无关"), "zh")


# -- the sentence before N(A) ---------------------------------------------------------------------------------

#: the words by which the sentence claims identical terms were brought together
_CLAIM = {"en": ("gathered", "collected"), "zh": ("合并",)}
_GATHERED = {"en": "every other part stays as written", "zh": "其余部分照原样写出"}
_LEAD = {"en": "**Every term that holds $A$.**", "zh": "**含 $A$ 的项。**"}
_OPEN = re.compile(r"\\(?:left|bigl|Bigl|biggl|Biggl)\(")
_CLOSE = re.compile(r"\\(?:right|bigr|Bigr|biggr|Biggr)\)")


def sums(display: str) -> list[list[str]]:
    """The terms of every sum in a display: the outermost, and each one in parentheses (a term holding a
    parenthesis is written with the terms inside it)."""
    s = _CLOSE.sub(")", _OPEN.sub("(", display))
    s = re.sub(r"\\\\\s*&\\quad|\\begin\{aligned\}|\\end\{aligned\}|&", " ", s).split("=", 1)[-1]
    found, stack, terms, term, braces = [], [], [], "", 0
    for c in s:
        braces += {"{": 1, "}": -1}.get(c, 0)
        if braces:
            term += c
        elif c == "(":
            stack.append((terms, term))
            terms, term = [], ""
        elif c == ")":
            inner = [t for t in (*terms, " ".join(term.split())) if t]
            found.append(inner)
            terms, term = stack.pop()
            term += "(" + " + ".join(inner) + ")"
        elif c in "+-":
            terms.append(" ".join(term.split()))
            term = ""
        else:
            term += c
    found.append([t for t in (*terms, " ".join(term.split())) if t])
    return found


def repeated(display: str) -> list[str]:
    """The terms a sum of ``display`` holds more than once."""
    return sorted({t for terms in sums(display) for t in terms if terms.count(t) > 1})


def false_gathering(text: str, lg: str) -> list[str]:
    """What the sentence before N(A) claims gathered, or kept once, and the display holds twice."""
    if _LEAD[lg] not in text:
        return []
    after = text[text.index(_LEAD[lg]):]
    sentence, display = after.split("\n", 1)[0], after[after.index("$$") + 2:after.index("$$", after.index("$$") + 2)]
    if not any(word in sentence for word in _CLAIM[lg]):
        return []  # "as written", and nothing more: a part twice is two parts
    twice = repeated(display)
    with_a = [t for t in twice if "A" in re.sub(r"\\[a-z]+", "", t)]  # a part with A twice: not gathered
    return with_a + (twice if _GATHERED[lg] not in sentence else [])  # one without A twice: unless the sentence says so


def test_the_sentence_before_n_of_a_says_what_the_display_gathers_and_keeps():
    assert not {p.name: f for p in MD if (f := false_gathering(p.read_text(encoding="utf-8"), lang(p)))}


def test_the_sentence_check_fails_on_what_bert_printed_before():
    display = (r"N(A) = (V + P + S) H + 2 H + L \biggl(3 A \Bigl(H \cdot \frac{H}{A} + \frac{H}{A}\Bigr) + H \cdot H"
               r" + H + 2 H + H \cdot r \cdot H + r \cdot H + r \cdot H \cdot H + H + 2 H\biggr) + H \cdot H + H")
    assert sorted(repeated(display)) == ["2 H", "H"]
    assert repeated(r"N(A) = L \left(A \cdot \frac{H}{A} + A \cdot \frac{H}{A} + H\right)") == [r"A \cdot \frac{H}{A}"]
    old = ("**Every term that holds $A$.** Adding every part as written, with the identical terms that hold $A$ "
           "collected:")
    assert _GATHERED["en"] not in old


# -- punctuation ----------------------------------------------------------------------------------------------

_MATH_OR_CODE = re.compile(r"\$\$.*?\$\$|\\\[.*?\\\]|\\begin\{(align\*?|tikzpicture|aligned|tabular)\}.*?\\end\{\1\}"
                           r"|```.*?```|\$[^$\n]*\$", re.S)
#: a space or a line break between a word and the punctuation after it
_SPACE_BEFORE = re.compile(r"[^\s|&\\]([ \t]*\n[ \t]*|[ \t]+)([,.;:](?=\s|$)|[，。；：、])")


def spaces_before_punctuation(text: str) -> list[str]:
    prose = _MATH_OR_CODE.sub("X", text)
    return [prose[max(0, m.start() - 30):m.end()] for m in _SPACE_BEFORE.finditer(prose)]


def test_no_space_stands_before_a_comma_or_a_full_stop():
    assert not {p.name: s for p in MD + TEX if (s := spaces_before_punctuation(p.read_text(encoding="utf-8")))}


def test_the_punctuation_check_finds_t5s_label_before_its_comma():
    assert spaces_before_punctuation("largest single table or matrix: Token embedding (\\texttt{shared})\n, 11.07\\%.")
    assert spaces_before_punctuation("嵌入层（\\texttt{shared}）\n。层归一化")
    assert not spaces_before_punctuation("Token embedding (`shared`), 11.07%. Shape $[H] = [768]$.")


# -- "a polynomial in the sizes" ------------------------------------------------------------------------------

_POLYNOMIAL = {"en": "polynomial in the sizes", "zh": "各个尺寸的多项式"}


def fraction_called_a_polynomial(text: str, lg: str) -> bool:
    """Whether the document calls its count a polynomial and the closed form it prints divides by a size."""
    closed = re.search(r"\n## 4\. .*?\$\$(.*?)\$\$", text, re.S)
    return _POLYNOMIAL[lg] in text and closed is not None and r"\frac" in closed.group(1)


def test_a_count_that_divides_by_a_size_is_not_called_a_polynomial():
    assert not [p.name for p in MD if fraction_called_a_polynomial(p.read_text(encoding="utf-8"), lang(p))]
    # Llama's N = 2H²L(1 + G/A) + …, called a polynomial before
    llama = "\n## 4. The closed form\n\n…a polynomial in the sizes:\n\n$$N = 2 H^{2} L \\left(1 + \\frac{G}{A}\\right)$$"
    assert fraction_called_a_polynomial(llama, "en")
    assert _POLYNOMIAL["en"] in (DOCS / "bert-base.en.md").read_text(encoding="utf-8")
