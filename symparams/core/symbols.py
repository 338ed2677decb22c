"""The symbols every model is written in.

Each symbol is created once, here, with its assumptions, and used everywhere
else by identity (``Symbol('H') != Symbol('H', positive=True)``).  Sizes are
positive integers; the FFN ratio ``r`` (intermediate size = r·H) is a positive
rational.

>>> from symparams.core.symbols import H, A, r, describe
>>> H.is_integer, H.is_positive, r.is_rational
(True, True, True)
>>> describe("A", "en")
'attention heads'
>>> describe("A", "zh")
'注意力头数'
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from .errors import SymparamsError


@dataclass(frozen=True)
class SymbolInfo:
    """A symbol with its descriptions and value domain."""

    symbol: sp.Symbol
    en: str
    zh: str
    rational: bool = False  # True: positive rational (a ratio); False: positive integer

    @property
    def name(self) -> str:
        return self.symbol.name


def _size(name: str) -> sp.Symbol:
    return sp.Symbol(name, positive=True, integer=True)


V = _size("V")
P = _size("P")
S = _size("S")
H = _size("H")
L = _size("L")
L_d = _size("L_d")
V_d = _size("V_d")
A = _size("A")
r = sp.Symbol("r", positive=True, rational=True)
C = _size("C")
E = _size("E")
G = _size("G")
D = _size("D")
B = _size("B")
F = _size("F")

SYMBOLS: dict[str, SymbolInfo] = {
    info.name: info
    for info in (
        SymbolInfo(V, "vocabulary size", "词表大小"),
        SymbolInfo(P, "maximum positions", "最大位置数"),
        SymbolInfo(S, "segment (token type) vocabulary", "句子类型（segment）数"),
        SymbolInfo(H, "hidden size", "隐藏层维度"),
        SymbolInfo(L, "layers", "层数"),
        SymbolInfo(L_d, "decoder layers (when they differ from the encoder's)", "解码器层数（与编码器不同时）"),
        SymbolInfo(V_d, "decoder vocabulary (the decoder's own token table)", "解码器词表大小（解码器有独立词表时）"),
        SymbolInfo(A, "attention heads", "注意力头数"),
        SymbolInfo(r, "FFN ratio (intermediate size = r·H)", "前馈网络扩张倍数（中间层维度 = r·H）", rational=True),
        SymbolInfo(C, "labels of the classification head", "分类头的类别数"),
        SymbolInfo(E, "embedding size", "词嵌入维度"),
        SymbolInfo(G, "key/value heads", "键值头数（KV heads）"),
        SymbolInfo(D, "head dimension", "每个头的维度"),
        SymbolInfo(B, "relative attention buckets", "相对位置桶数"),
        SymbolInfo(F, "intermediate (FFN) size", "前馈网络中间层维度"),
    )
}

#: The order symbols are listed in documents and JSON output.
ORDER = tuple(SYMBOLS)


def symbol(name: str) -> sp.Symbol:
    """The symbol called ``name``; a :class:`SymparamsError` for an unknown name."""
    try:
        return SYMBOLS[name].symbol
    except KeyError:
        raise SymparamsError(f"unknown symbol {name!r} (known: {', '.join(ORDER)})") from None


def describe(name: str, lang: str = "en") -> str:
    """The description of symbol ``name`` in ``lang`` (``en`` or ``zh``)."""
    info = SYMBOLS[name]
    return info.zh if lang == "zh" else info.en


def ordered(symbols) -> list[sp.Symbol]:
    """``symbols`` sorted in the house order (V P S H L A r C E G D B F)."""
    return sorted(symbols, key=lambda s: ORDER.index(s.name) if s.name in SYMBOLS else len(ORDER))
