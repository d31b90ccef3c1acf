"""LLM architectures from Hugging Face style configs, and the catalog of them (``models/llm/*.yaml``).

:func:`config_from_hf` reads the keys of a ``config.json`` (Llama / Mistral / Mixtral names, with the
GPT-J and Falcon aliases ``n_layer``, ``n_embd``, ``n_head``, ``n_inner``, ``num_kv_heads``) into an
:class:`LlmConfig`; :func:`load_model` finds a catalog entry by name (or reads a file) and returns
its config. A catalog file holds ``name``, ``description``, ``config`` (the keys) and ``sources``.

The MLP is gated (``gate`` and ``up`` projections and a SiLU product, three matrices) when the
activation is ``silu`` or ``swiglu``, as in Llama and Mixtral, unless ``gated_mlp`` says otherwise;
else two matrices (GELU). ``intermediate_size`` defaults to 4 x hidden. ``parallel_attention``:
attention and MLP read the same normalized input (GPT-J, Falcon), one norm per layer instead of two.

Errors: a missing or ill-typed key raises :class:`~dse.errors.SpecError` naming the file, the key and
the value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dse.errors import SpecError
from dse.util.home import models_dir
from dse.util.yamlio import read_yaml

#: Hugging Face key -> the aliases other model families use for it.
ALIASES: dict[str, tuple[str, ...]] = {
    "num_hidden_layers": ("n_layer", "num_layers"),
    "hidden_size": ("n_embd", "d_model"),
    "num_attention_heads": ("n_head",),
    "num_key_value_heads": ("num_kv_heads", "n_head_kv"),
    "intermediate_size": ("n_inner", "ffn_hidden_size"),
    "hidden_act": ("activation_function",),
}
#: Activations whose MLP is gated (three matrices).
GATED_ACTIVATIONS = ("silu", "swiglu")


@dataclass(frozen=True)
class LlmConfig:
    """A decoder-only transformer: sizes as in a Hugging Face config (``experts`` 1 for a dense MLP)."""

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    intermediate: int
    vocab: int
    head_dim: int
    gated_mlp: bool = True
    experts: int = 1
    top_k: int = 1
    tied_embeddings: bool = False
    parallel_attention: bool = False
    sources: Mapping[str, str] = field(default_factory=dict)

    @property
    def mlp_matrices(self) -> int:
        """Weight matrices of one expert's MLP: 3 gated, 2 plain."""
        return 3 if self.gated_mlp else 2

    def parameters(self, active: bool = False) -> float:
        """Parameter count (norm weights included, biases left out); ``active``: per token, the
        ``top_k`` experts an MoE layer runs instead of all of them."""
        h, hd = self.hidden, self.head_dim
        attention = h * hd * (2 * self.heads + 2 * self.kv_heads)
        experts = self.top_k if active else self.experts
        mlp = experts * self.mlp_matrices * h * self.intermediate + (h * self.experts if self.experts > 1 else 0)
        norms = (1 if self.parallel_attention else 2) * h
        embeddings = self.vocab * h * (1 if self.tied_embeddings else 2)
        return float(self.layers * (attention + mlp + norms) + embeddings + h)


def _get(data: Mapping[str, Any], key: str, source: str, default: Any = ...) -> Any:
    """``data[key]`` or one of its aliases; ``default`` when absent (or null), else :class:`SpecError`."""
    for name in (key, *ALIASES.get(key, ())):
        if data.get(name) is not None:
            return data[name]
    if default is ...:
        raise SpecError(source, f"config.{key}", None, "missing")
    return default


def _positive(data: Mapping[str, Any], key: str, source: str, default: Any = ...) -> int:
    value = _get(data, key, source, default)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise SpecError(source, f"config.{key}", value, "must be a positive integer")
    return value


def config_from_hf(data: Mapping[str, Any], name: str = "custom", source: str = "<config>",
                   sources: Mapping[str, str] | None = None) -> LlmConfig:
    """The :class:`LlmConfig` of Hugging Face config keys ``data``; :class:`SpecError` naming ``source``
    and the key for a missing size, a non-positive one, or heads that do not divide as they must."""
    if not isinstance(data, Mapping):
        raise SpecError(source, "config", data, "must be a mapping of Hugging Face config keys")
    layers = _positive(data, "num_hidden_layers", source)
    hidden = _positive(data, "hidden_size", source)
    heads = _positive(data, "num_attention_heads", source)
    kv_heads = _positive(data, "num_key_value_heads", source, heads)
    head_dim = _positive(data, "head_dim", source, hidden // heads if hidden % heads == 0 else 0)
    if heads % kv_heads:
        raise SpecError(source, "config.num_key_value_heads", kv_heads, f"must divide num_attention_heads = {heads}")
    activation = str(_get(data, "hidden_act", source, "silu"))
    gated = data.get("gated_mlp", activation in GATED_ACTIVATIONS)
    experts = _positive(data, "num_local_experts", source, 1)
    top_k = _positive(data, "num_experts_per_tok", source, 1 if experts == 1 else 2)
    if top_k > experts:
        raise SpecError(source, "config.num_experts_per_tok", top_k, f"at most num_local_experts = {experts}")
    for key in ("gated_mlp", "tie_word_embeddings", "parallel_attention"):
        if key in data and not isinstance(data[key], bool):
            raise SpecError(source, f"config.{key}", data[key], "must be true or false")
    return LlmConfig(
        name=name, layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads,
        intermediate=_positive(data, "intermediate_size", source, 4 * hidden),
        vocab=_positive(data, "vocab_size", source), head_dim=head_dim, gated_mlp=bool(gated),
        experts=experts, top_k=top_k, tied_embeddings=bool(data.get("tie_word_embeddings", False)),
        parallel_attention=bool(data.get("parallel_attention", data.get("parallel_attn", False))),
        sources=dict(sources or {}),
    )


def llm_dir() -> Path:
    """The catalog's ``models/llm`` folder."""
    return models_dir() / "llm"


def models() -> list[str]:
    """Names of the catalog's LLMs."""
    folder = llm_dir()
    return sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []


def load_model(ref: str) -> LlmConfig:
    """The config of catalog LLM ``ref`` (``models/llm/<ref>.yaml``) or of the file ``ref`` (a catalog
    file, or a bare ``config.json`` / YAML of Hugging Face keys). Raises :class:`SpecError` (field
    ``model``) for a name in neither, and for an ill-formed file."""
    path = Path(ref)
    if not (path.suffix in (".yaml", ".yml", ".json") and path.is_file()):
        path = llm_dir() / f"{ref}.yaml"
        if not path.is_file():
            raise SpecError("workload.builder", "model", ref, f"not a catalog LLM ({', '.join(models())}) or a file")
    data = read_yaml(path)
    if isinstance(data, Mapping) and "config" in data:
        sources = data.get("sources") or {}
        return config_from_hf(data["config"], str(data.get("name", path.stem)), str(path),
                              {str(k): str(v) for k, v in sources.items()})
    return config_from_hf(data, path.stem, str(path))
