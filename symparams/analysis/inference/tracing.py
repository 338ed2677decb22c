"""One traced forward and backward pass: every counted matrix product with its module, its shape and its backward.

The FLOPs are PyTorch's own: a :class:`Recorder` is a dispatch mode that
counts exactly what ``torch.utils.flop_counter.FlopCounterMode`` counts (the
same registry, the same decompositions), but keeps each product apart: the
module that ran it (innermost first, named as :mod:`.probing` names
parameters: ``model.layers.*.self_attn.q_proj``), its factors (``[m, k, n]``
of an ``mm``: ``2·m·k·n`` FLOPs) and the FLOPs its backward spends.  A
backward product is matched to the forward product whose autograd node runs
it (the node's sequence number), so the backward is known per product, where
the counter's own attribution by module is not.

The cache a ``use_cache=True`` forward returns is read tensor by tensor: each
layer's class, whether it keeps a sliding window (and how long), whether it
is a cross-attention cache, and the shape of every tensor it holds.
"""

from __future__ import annotations

import contextlib
import inspect
from dataclasses import dataclass, field
from math import prod
from typing import Mapping

from .meta import meta_device
from .probing import _INDEX, _layer_kinds, _normalise, _numbered, _position, config_for_class, libraries, quiet

#: the attention and experts implementations traced: the plain matmuls the counter sees (batched experts multiply
#: each token by exactly its top-k experts, as the eager loop does, and run on the meta device)
ATTENTION = "eager"
EXPERTS = "batched_mm"


class Untraceable(Exception):
    """This class cannot be traced exactly; the message says why, in one line."""


@dataclass
class Product:
    """One counted product of a forward pass: ``scale · Π factors`` FLOPs, and its backward's FLOPs."""

    module: str  # the normalised path of the innermost module that ran it
    op: str  # "mm", "bmm", "addmm", "baddbmm", "convolution"
    factors: tuple[int, ...]
    forward: int
    backward: int = 0
    node: int | None = None  # the autograd node's sequence number (None: nothing needs its gradient)
    weight: bool = False  # one factor is a parameter (or a view of one): a weight's matmul
    call: int = 0  # which call of a module ran it (the products of one call share it)
    channels: int | None = None  # a convolution's input channels (its weight's gradient is a convolution over them)
    outer: int = 0  # the call of the module around the one that ran it (an experts loop's layer)
    parameter: int = 0  # the id of the parameter a weight factor is (or is a view of); 0: none


@dataclass
class CacheTensor:
    """One tensor a cache layer holds, by the layer's place and the attribute holding it."""

    part: str  # "self" or "cross"
    layer: int  # the layer's index in its part
    kind: str  # the layer's class
    attribute: str  # "keys", "values", "conv_states", ...
    shape: tuple[int, ...]
    window: int | None  # a sliding-window layer's sliding_window (it keeps sliding_window - 1 tokens)


@dataclass
class Trace:
    """A forward pass over ``batch`` sequences of ``seq`` tokens and its backward, as the counter saw them."""

    seq: int
    batch: int
    products: list[Product]
    extra_backward: dict[str, int] = field(default_factory=dict)  # by module: backward FLOPs of no forward product
    cache: list[CacheTensor] | None = None  # None: the class returns no cache
    traced_backward: bool = True  # whether the backward pass was traced (else every backward field is 0)

    @property
    def forward(self) -> int:
        return sum(p.forward for p in self.products)

    @property
    def backward(self) -> int:
        return sum(p.backward for p in self.products) + sum(self.extra_backward.values())


#: the convolutions the counter counts (``2 · batch · Π output positions · Π weight``)
CONVOLUTIONS = ("convolution", "_convolution", "cudnn_convolution", "_slow_conv2d_forward", "convolution_overrideable")


#: products that count alike whatever else they add (a bias): one key, so a bias flag changes no structure
SAME = {"addmm": "mm", "baddbmm": "bmm", **{c: "convolution" for c in CONVOLUTIONS}}


def factors(op: str, args: tuple, out=None) -> tuple[int, ...]:
    """The factors of a counted product whose product, twice, is the FLOPs the counter gives it."""
    shapes = [tuple(int(d) for d in a.shape) if hasattr(a, "shape") else a for a in args]
    if op in CONVOLUTIONS:
        x, w, transposed = shapes[0], shapes[1], args[6]
        positions = (x if transposed else tuple(int(d) for d in out.shape))[2:]
        return (x[0], *positions, *w)
    if op == "mm":
        (m, k), (_, n) = shapes[0], shapes[1]
        return m, k, n
    if op == "addmm":
        (m, k), (_, n) = shapes[1], shapes[2]
        return m, k, n
    if op == "bmm":
        (b, m, k), (_, _, n) = shapes[0], shapes[1]
        return b, m, k, n
    if op == "baddbmm":
        (b, m, k), (_, _, n) = shapes[1], shapes[2]
        return b, m, k, n
    raise Untraceable(f"a product the fit does not factor: aten.{op}")


class Recorder:
    """A dispatch mode recording every product the FLOP counter counts, with the module running it (forward) or
    the autograd node (backward); built lazily, torch being imported only here."""

    def __new__(cls, parameters=frozenset()):
        torch, _ = libraries()
        from torch.utils._python_dispatch import TorchDispatchMode
        from torch.utils.flop_counter import flop_registry

        skipped = {torch.ops.aten.sym_is_contiguous.default, torch.ops.aten.is_contiguous.default,
                   torch.ops.aten.is_contiguous.memory_format, torch.ops.aten.is_strides_like_format.default,
                   torch.ops.aten.is_non_overlapping_and_dense.default, torch.ops.aten.size.default,
                   torch.ops.aten.sym_size.default, torch.ops.aten.stride.default, torch.ops.aten.sym_stride.default,
                   torch.ops.aten.storage_offset.default, torch.ops.aten.sym_storage_offset.default,
                   torch.ops.aten.numel.default, torch.ops.aten.sym_numel.default, torch.ops.aten.dim.default,
                   torch.ops.prim.layout.default}

        class _Recorder(TorchDispatchMode):
            def __init__(self):
                super().__init__()
                self.parameters = parameters  # ids of the model's parameters
                self.stack: list[tuple[str, int]] = []  # (module, call) of the modules running, innermost last
                self.calls = 0
                self.products: list[Product] = []
                self.backward: list[tuple[int | None, int]] = []  # (node, FLOPs) of each backward product
                self.in_backward = False

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                if func in skipped:
                    return NotImplemented
                if isinstance(func, torch._ops.HigherOrderOperator):
                    raise Untraceable(f"a higher-order operator the fit does not follow: {func}")
                if func not in flop_registry and func is not torch.ops.prim.device.default:
                    with self:  # as FlopCounterMode: a composite op is counted by its parts
                        decomposed = func.decompose(*args, **kwargs)
                        if decomposed is not NotImplemented:
                            return decomposed
                out = func(*args, **kwargs)
                packet = func._overloadpacket
                if packet in flop_registry:
                    flops = int(flop_registry[packet](*args, **kwargs, out_val=out))
                    self._record(packet.__name__, args, flops, out)
                return out

            def _record(self, op, args, flops, out):
                if self.in_backward:
                    node = torch._C._current_autograd_node()
                    self.backward.append((None if node is None else node._sequence_nr(), flops))
                    return
                tensors = [a for a in args if isinstance(a, torch.Tensor)]
                grad = torch.is_grad_enabled() and any(t.requires_grad for t in tensors)
                node = torch._C._autograd._get_sequence_nr() - 1 if grad else None
                found = factors(op, args, out)
                if 2 * prod(found) != flops:
                    raise Untraceable(f"aten.{op} counted {flops} FLOPs, not twice its factors {found}")
                roots = [r for t in tensors for r in (id(t), id(getattr(t, "_base", None))) if r in self.parameters]
                weight = bool(roots)
                module, call = self.stack[-1] if self.stack else ("", 0)
                outer = self.stack[-2][1] if len(self.stack) > 1 else 0
                channels = int(args[0].shape[1]) if op in CONVOLUTIONS else None
                self.products.append(Product(module, SAME.get(op, op), found, flops, node=node, weight=weight,
                                             call=call, channels=channels, outer=outer,
                                             parameter=roots[0] if roots else 0))

        return _Recorder()


def module_paths(model, by_names: bool = False, positions: Mapping[str, int] | None = None) -> dict[int, str]:
    """Each module's path, normalised as parameter names are (list indices ``*``, ``*k`` for layers of a kind);
    ``by_names``: layers whose parameters have other names are of other kinds too (a hybrid stack's mixers,
    state-space or attention under one name, run other products); ``positions``: the lists (by their normalised
    path) whose element i is written ``*@r``, r = i mod the list's period (see :func:`_position_kinds`)."""
    from torch import nn

    lists = {name for name, m in model.named_modules() if isinstance(m, (nn.ModuleList, nn.ParameterList))
             or (isinstance(m, nn.ModuleDict) and _numbered(m))}
    named = [(name.split("."), tuple(int(d) for d in p.shape)) for name, p in model.named_parameters()]
    kinds = {**_layer_kinds(named, lists), **(_name_kinds(named, lists) if by_names else {})}
    if positions:
        kinds.update(_position_kinds(model, lists, kinds, positions))
    return {id(m): _normalise(name.split("."), lists, kinds) if name else "" for name, m in model.named_modules()}


def _position_kinds(model, lists: set, kinds: dict, positions: Mapping[str, int]) -> dict[tuple[str, str], str]:
    """The elements of each list of ``positions`` (its path, every index ``*`` → period p) by their place: element i's kind
    gains ``@(i mod p)``.  Layers of one structure may still run at other sizes by their place (Funnel's blocks
    each pool the sequence to half the last one's; Pegasus-X's odd layers stagger their blocks): each place in
    the period is then keyed apart, and its count is that of the layers at that place."""
    out = {}
    for name in lists:
        period = positions.get(_normalise(name.split("."), lists))  # every index a plain ``*``
        for index in (n for n, _ in model.get_submodule(name).named_children()) if period else ():
            if _INDEX.match(index):
                out[name, index] = f"{kinds.get((name, index), '*')}@{int(index) % period}"
    return out


def _name_kinds(named: list, lists: set) -> dict[tuple[str, str], str]:
    """``*k`` for the elements of each list by the names of their parameters, in layer order (a list whose
    elements all hold the same names is left out)."""
    names: dict[str, dict[str, set]] = {}
    for parts, _ in named:
        for i in range(len(parts) - 1):
            prefix = ".".join(parts[:i])
            if prefix in lists and _INDEX.match(parts[i]):
                names.setdefault(prefix, {}).setdefault(parts[i], set()).add(".".join(parts[i + 1:]))
    kinds = {}
    for prefix, elements in names.items():
        order = list(dict.fromkeys(frozenset(elements[i]) for i in sorted(elements, key=_position)))
        if len(order) > 1:
            kinds.update({(prefix, i): f"*{order.index(frozenset(elements[i])) + 1}" for i in elements})
    return kinds


def build(model_class, config, device: str = "meta", seed: int = 0):
    """``model_class`` from ``config`` with eager attention and batched experts, on ``device`` (meta: no weights)."""
    torch, _ = libraries()
    config = every_layer(with_language(config_for_class(model_class, config)))
    kwargs = {"attn_implementation": ATTENTION}
    if _can_set_experts(model_class):
        kwargs["experts_implementation"] = EXPERTS
    with quiet():
        if device == "meta":
            with meta_device():
                return model_class._from_config(config, **kwargs)
        torch.manual_seed(seed)
        return model_class._from_config(config, **kwargs)


def with_language(config):
    """``config`` with a default language where it has languages and none set: X-MOD routes every token through
    its language's adapter and refuses ids of no language; one language's costs are any language's."""
    if getattr(config, "languages", None) and getattr(config, "default_language", "") is None:
        config.default_language = list(config.languages)[0]
    return config


def every_layer(config):
    """``config`` with every LayerDrop probability 0: in training mode LayerDrop skips a layer at random
    (M2M-100's ``encoder_layerdrop`` of 0.05), so a trace would count a random number of layers; the costs count
    every layer, as inference runs them and as the hand families count them."""
    for key, value in vars(config).items():
        if "layerdrop" in key and isinstance(value, (int, float)) and not isinstance(value, bool):
            setattr(config, key, 0.0)
    return config


def _can_set_experts(model_class) -> bool:
    check = getattr(model_class, "_can_set_experts_implementation", None)
    return bool(check and check())


#: what a forward may read in place of token ids (audio features, raw vectors, images)
NOT_IDS = ("input_features", "input_values", "inputs", "pixel_values")


def inputs(model, seq: int, batch: int, device: str = "meta", decoder_seq: int | None = None, seed: int = 1) -> dict:
    """Token ids for ``batch`` sequences of ``seq`` tokens (an encoder-decoder's decoder reads as many, or
    ``decoder_seq``), random from ``seed`` off the meta device.  A forward that names no ``input_ids`` but one of
    :data:`NOT_IDS` is refused: its costs follow another input than ids (Whisper's encoder reads mel features of
    a length its config fixes)."""
    torch, _ = libraries()
    named = inspect.signature(model.forward).parameters
    other = next((name for name in NOT_IDS if name in named), None)
    if "input_ids" not in named and other:
        raise Untraceable(f"its forward reads {other}, not token ids: the costs are traced over token ids")
    vocab = smallest_vocabulary(model.config.get_text_config())
    generator = torch.Generator().manual_seed(seed)
    # an audio-code decoder (MusicGen) reads a row of ids per codebook of each sequence
    rows = batch * (getattr(model.config, "num_codebooks", None) or 1)
    if device == "meta":
        ids = torch.zeros((rows, seq), dtype=torch.long, device="meta")
    else:
        ids = torch.randint(3 if vocab > 3 else 0, vocab, (rows, seq), generator=generator)
    out = {"input_ids": ids}
    if getattr(model.config, "is_encoder_decoder", False):
        out["decoder_input_ids"] = ids[:, :decoder_seq].clone() if decoder_seq else ids.clone()
    return out


def smallest_vocabulary(config) -> int:
    """The smallest of the vocabularies a config names (4 where none): token ids below it index every table (Gemma
    4 looks its per-layer embeddings up by the token ids, in a table of ``vocab_size_per_layer_input`` rows)."""
    sizes = [v for k, v in vars(config).items() if k.startswith("vocab_size") and type(v) is int and v > 0]
    return min(sizes, default=4)


def takes(model, name: str) -> bool:
    """Whether the model's forward takes the keyword ``name``."""
    signature = inspect.signature(model.forward)
    return name in signature.parameters or any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values())


@contextlib.contextmanager
def dispatch_modes_restored():
    """Leaves torch's dispatch-mode stack as deep as it found it, however the block ends: a signal that stops a
    trace inside a mode's dispatch (a time limit's alarm) skips the mode's own exit, and the mode left behind would
    record every later product of the process."""
    torch, _ = libraries()
    from torch.utils._python_dispatch import _pop_mode

    depth = torch._C._len_torch_dispatch_stack()
    try:
        yield
    finally:
        while torch._C._len_torch_dispatch_stack() > depth:
            _pop_mode()


@contextlib.contextmanager
def shapes_only():
    """Mask building skips its checks of the data on meta tensors (packed sequences, an all-ones mask), as it
    does when compiling, and no warning reads the ids for padding: they choose between masks of one cost, or
    print, and a meta tensor has no data to check."""
    from transformers import PreTrainedModel, cache_utils, masking_utils

    checked, warned = masking_utils.is_tracing, PreTrainedModel.warn_if_padding_and_no_attention_mask
    lengths = {name: getattr(cache_utils.Cache, name) for name in ("get_seq_length", "get_mask_sizes")}
    masking_utils.is_tracing = lambda tensor=None: checked(tensor) or getattr(tensor, "is_meta", False)
    # a warning about padding tokens in the input ids, which reads them
    PreTrainedModel.warn_if_padding_and_no_attention_mask = lambda self, *args, **kwargs: None
    cache_utils.Cache.get_seq_length = _unless_attention_free(lengths["get_seq_length"], lambda layer_idx=0: 0)
    cache_utils.Cache.get_mask_sizes = _unless_attention_free(lengths["get_mask_sizes"],
                                                              lambda query_length, layer_idx=0: (query_length, 0))
    try:
        yield
    finally:
        masking_utils.is_tracing, PreTrainedModel.warn_if_padding_and_no_attention_mask = checked, warned
        for name, method in lengths.items():
            setattr(cache_utils.Cache, name, method)


def _unless_attention_free(method, unseen):
    """A cache's length ``method`` that answers as ``unseen`` does (what the cache answers for a layer not yet
    created: nothing seen) where every layer is a state-space or linear-attention one, where transformers raises:
    a hybrid model builds its attention mask from its first attention layer's cache, and a stack of none (Bamba's
    default, every layer Mamba) tracks no length; the mask is for attention layers it does not have."""
    from transformers.cache_utils import CacheLayerMixin

    def answer(self, *args, **kwargs):
        layers = getattr(self, "layers", None)
        if layers and not any(isinstance(layer, CacheLayerMixin) for layer in layers):
            return unseen(*args, **kwargs)
        return method(self, *args, **kwargs)

    return answer


def scalar(output):
    """A scalar of every floating-point output that needs a gradient (the house's cross-checks do the same)."""
    torch, _ = libraries()
    total = None
    values = output.values() if hasattr(output, "values") else output
    for value in values:
        if isinstance(value, torch.Tensor) and value.is_floating_point() and value.requires_grad:
            part = value.float().sum()
            total = part if total is None else total + part
    return total


def trace(model, seq: int, batch: int, device: str = "meta", cache: bool = True, backward: bool = True,
          decoder_seq: int | None = None, together: bool = False, by_names: bool = False, seed: int = 1,
          positions: Mapping[str, int] | None = None) -> Trace:
    """The products of one forward pass over ``seq`` tokens of ``batch`` sequences without a cache and
    (``backward``) of its backward, and (``cache``) the cache a forward with ``use_cache=True`` leaves (another
    pass: a cache may change the products, Mamba's convolution padding its input; ``together``: one pass with
    the cache, where that changes no product); ``decoder_seq`` (fewer than ``seq``) gives an encoder-decoder's
    decoder fewer tokens than its encoder; ``seed``: the token ids off the meta device; ``by_names``: how layers are
    told apart, with ``positions`` (see :func:`module_paths`)."""
    torch, _ = libraries()
    paths = module_paths(model, by_names, positions)
    recorder = Recorder(frozenset(id(p) for p in model.parameters()))
    intervals: list[tuple[int, int, str]] = []  # (first node, last node, module): backward not matched to a product
    opened: list[int] = []

    def enter(module, args):
        recorder.calls += 1
        recorder.stack.append((paths.get(id(module), ""), recorder.calls))
        opened.append(torch._C._autograd._get_sequence_nr())

    def leave(module, args, output):
        intervals.append((opened.pop(), torch._C._autograd._get_sequence_nr(), recorder.stack.pop()[0]))

    hooks = [h for m in model.modules() for h in (m.register_forward_pre_hook(enter), m.register_forward_hook(leave))]
    model.train()
    given = inputs(model, seq, batch, device, decoder_seq, seed)
    cached = {"use_cache": together and cache} if takes(model, "use_cache") else {}
    built = {name: (type(m).__name__, paths.get(id(m), name)) for name, m in model.named_modules()}
    try:
        with quiet(), shapes_only(), recorder:  # the FLOPs without a cache, as the house's cross-checks count them
            output = _forward(model, given, cached)
            _unrebuilt(model, built, seq)
            loss = scalar(output) if backward else None
            recorder.in_backward = True
            if loss is not None:
                loss.backward()
    finally:
        for h in hooks:
            h.remove()
    held = None
    if cache and cached:
        if not together:
            with quiet(), shapes_only(), torch.no_grad():
                output = cached_forward(model, given)
        held = cache_tensors(getattr(output, "past_key_values", None))
    products = recorder.products
    by_node = {p.node: p for p in products if p.node is not None}
    extra: dict[str, int] = {}
    for node, flops in recorder.backward:
        if node in by_node:
            by_node[node].backward += flops
        else:
            where = _innermost(intervals, node)
            extra[where] = extra.get(where, 0) + flops
    return Trace(seq, batch, products, extra, held, backward)


def _unrebuilt(model, built: dict[str, tuple[str, str]], seq: int) -> None:
    """Refuses a forward pass that rebuilt some of its modules (``built``: name → class and path before it):
    BigBird's block-sparse attention, its default, replaces itself by full attention on a pass of up to
    (5 + 2·num_random_blocks)·block_size tokens and stays block-sparse above, so short traces say nothing of
    longer inputs."""
    for name, m in model.named_modules():
        before, path = built.get(name, (type(m).__name__, name))
        if before != type(m).__name__:
            raise Untraceable(f"a forward pass of {seq} tokens rebuilt {path} from {before} into "
                              f"{type(m).__name__}: its costs depend on the length beyond what short traces show")


#: inputs a forward may need beside token ids → what they are (an assistant drafts from the main model's states);
#: names no error message uses as a plain word ("inputs" would be one)
OTHER_INPUTS = {"input_features": "audio features", "input_values": "raw audio",
                "shared_kv_states": "the key/value states of the model it assists"}


def _forward(model, given: dict, cached: dict):
    """``model``'s forward over token ids; where it fails naming an input of :data:`OTHER_INPUTS` that its
    signature takes, refused in one plain line: the costs then follow inputs that token ids do not give, at every
    configuration alike (a failure naming none is one configuration's, and the caller skips it)."""
    try:
        return model(**given, **cached)
    except Untraceable:
        raise
    except Exception as exc:
        first = (str(exc).splitlines() or [""])[0]
        named = inspect.signature(model.forward).parameters
        needed = next((name for name in OTHER_INPUTS if name in named and name in first), None)
        if needed is None:
            raise
        raise Untraceable(f"its forward needs {needed} ({OTHER_INPUTS[needed]}) beside token ids: the costs are "
                          f"traced over token ids alone") from exc


class CachedPassFailed(RuntimeError):
    """The forward pass ran without a cache and failed with one (``use_cache=True``): said so, so that the reason
    of a class whose cache transformers cannot build is not a bare error from deep in its cache."""


def cached_forward(model, given: dict):
    """``model``'s forward with its cache; where passing ``use_cache=True`` fails and its config caches already,
    the forward without it (Switch Transformers hands the flag to its encoder as well, which refuses it, while
    its config's flag reaches the decoder alone)."""
    try:
        return model(**given, use_cache=True)
    except Exception as exc:
        if getattr(model.config, "use_cache", False):
            try:
                output = model(**given)
            except Exception:
                output = None
            if getattr(output, "past_key_values", None) is not None:
                return output
        first = (str(exc).splitlines() or [""])[0]
        raise CachedPassFailed(f"with use_cache=True the forward fails ({type(exc).__name__}: {first})") from exc


def _innermost(intervals: list[tuple[int, int, str]], node: int | None) -> str:
    """The innermost module whose forward created autograd node ``node`` ("" when none did)."""
    best = None
    for first, last, name in intervals:
        if node is not None and first <= node < last and (best is None or last - first < best[1] - best[0]):
            best = (first, last, name)
    return "" if best is None else best[2]


def cache_tensors(cache) -> list[CacheTensor] | None:
    """Every tensor a returned cache holds, layer by layer (an encoder-decoder cache: its two parts); None when
    the forward returned no cache."""
    if cache is None:
        return None
    parts = [("self", cache.self_attention_cache), ("cross", cache.cross_attention_cache)] \
        if hasattr(cache, "cross_attention_cache") else [("self", cache)]
    out = []
    for part, held in parts:
        layers = getattr(held, "layers", None)
        if layers is None:
            layers = _states_by_layer(held)
        if layers is None:
            raise Untraceable(f"a cache the fit does not read: {type(held).__name__}")
        for index, layer in enumerate(layers):
            window = getattr(layer, "sliding_window", None) if getattr(layer, "is_sliding", False) else None
            for attribute, tensor in _tensors(layer):
                out.append(CacheTensor(part, index, type(layer).__name__, attribute,
                                       tuple(int(d) for d in tensor.shape), window))
    return out


class RecurrentState:
    """One layer's states in a cache that keeps them by layer index rather than as cache layers (xLSTM's
    ``rnn_state``: its matrix memory, normaliser and maximum, per layer)."""

    def __init__(self, name: str, states):
        setattr(self, name, states)


def _states_by_layer(cache) -> list[RecurrentState] | None:
    """The layers of a cache that holds a dict of each layer's states by its index, in layer order (None where
    it holds no such dict)."""
    for name, value in sorted(vars(cache).items()):
        if isinstance(value, dict) and value and all(isinstance(k, int) for k in value):
            return [RecurrentState(name, value[k]) for k in sorted(value)]
    return None


def _tensors(layer) -> list[tuple[str, object]]:
    """The tensors a cache layer holds (a list or dict of them: each by its place), ``_``-prefixed bookkeeping left out."""
    torch, _ = libraries()
    out = []
    for name, value in sorted(vars(layer).items()):
        if name.startswith("_"):
            continue
        if isinstance(value, torch.Tensor) and value.dim() > 0:
            out.append((name, value))
        elif isinstance(value, (list, tuple, dict)):  # several states of one layer (a dict by state index)
            items = value.items() if isinstance(value, dict) else enumerate(value)
            out += [(f"{name}.{k}", v) for k, v in items if isinstance(v, torch.Tensor) and v.dim() > 0]
    return out
