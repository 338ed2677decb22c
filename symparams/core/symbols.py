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

from typing import NamedTuple

import sympy as sp

from .errors import SymparamsError


class SymbolInfo(NamedTuple):
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
A_d = _size("A_d")
r = sp.Symbol("r", positive=True, rational=True)
r_d = sp.Symbol("r_d", positive=True, rational=True)
C = _size("C")
E = _size("E")
G = _size("G")
D = _size("D")
B = _size("B")
F = _size("F")
# mixture of experts and multi-head latent attention (DeepSeek's MLA)
N_e = _size("N_e")
k_e = _size("k_e")
F_e = _size("F_e")
N_s = _size("N_s")
F_s = _size("F_s")
L_f = _size("L_f")
R_q = _size("R_q")
R_kv = _size("R_kv")
D_n = _size("D_n")
D_r = _size("D_r")
D_v = _size("D_v")
# an adapter's rank (LoRA's r; r is taken by the FFN ratio)
R = _size("R")

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
        SymbolInfo(A_d, "decoder attention heads (when they differ from the encoder's)",
                   "解码器注意力头数（与编码器不同时）"),
        SymbolInfo(r, "FFN ratio (intermediate size = r·H)", "前馈网络扩张倍数（中间层维度 = r·H）", rational=True),
        SymbolInfo(r_d, "decoder FFN ratio (decoder intermediate size = r_d·H, when it differs from the encoder's)",
                   "解码器前馈网络扩张倍数（解码器中间层维度 = r_d·H，与编码器不同时）", rational=True),
        SymbolInfo(C, "labels of the classification head", "分类头的类别数"),
        SymbolInfo(E, "embedding size", "词嵌入维度"),
        SymbolInfo(G, "key/value heads", "键值头数（KV heads）"),
        SymbolInfo(D, "head dimension", "每个头的维度"),
        SymbolInfo(B, "relative attention buckets", "相对位置桶数"),
        SymbolInfo(F, "intermediate (FFN) size", "前馈网络中间层维度"),
        SymbolInfo(N_e, "routed experts per mixture-of-experts layer", "每个混合专家层的路由专家数"),
        SymbolInfo(k_e, "routed experts each token uses (top-k)", "每个词元选用的路由专家数（top-k）"),
        SymbolInfo(F_e, "intermediate size of one expert", "单个专家的前馈中间层维度"),
        SymbolInfo(N_s, "shared experts (every token uses them)", "共享专家数（每个词元都经过）"),
        SymbolInfo(F_s, "intermediate size of the shared expert", "共享专家的前馈中间层维度"),
        SymbolInfo(L_f, "layers with a dense FFN instead of experts", "使用普通前馈网络（不用专家）的层数"),
        SymbolInfo(R_q, "rank of the compressed query (MLA)", "查询压缩的秩（MLA）"),
        SymbolInfo(R_kv, "rank of the compressed key/value (MLA)", "键值压缩的秩（MLA）"),
        SymbolInfo(D_n, "query/key head width without rotary positions (MLA)", "每个头不带旋转位置编码的查询/键维度（MLA）"),
        SymbolInfo(D_r, "query/key head width with rotary positions (MLA)", "每个头带旋转位置编码的查询/键维度（MLA）"),
        SymbolInfo(D_v, "value head width (MLA)", "每个头的值维度（MLA）"),
        SymbolInfo(R, "rank of a LoRA adapter (LoRA's r)", "LoRA 适配器的秩（LoRA 的 r）"),
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


def legend(symbols) -> str:
    """What each of ``symbols`` stands for, in the house order, on one line (a symbol no family shares is a
    config field of its own name).

    >>> legend([H, sp.Symbol("state_size")])
    'where H: hidden size; state_size: the config field of that name'
    """
    def meaning(symbol: sp.Symbol) -> str:
        return describe(symbol.name) if symbol.name in SYMBOLS else "the config field of that name"

    ranked = sorted(symbols, key=lambda s: (ORDER.index(s.name) if s.name in SYMBOLS else len(ORDER), s.name))
    return "where " + "; ".join(f"{symbol.name}: {meaning(symbol)}" for symbol in ranked)
