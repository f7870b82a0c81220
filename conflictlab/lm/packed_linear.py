"""fp32 linear layers held in oneDNN's layout, for CPU inference.

On CPU, PyTorch runs a dense float32 ``nn.Linear`` through MKL's sgemm. On
2 cores of an AMD EPYC with AVX-512, MKL reaches 174–217 GFLOP/s for
SmolLM2's layer shapes, while oneDNN's fp32 kernels on a weight reordered
once to oneDNN's layout reach 413–507 GFLOP/s
(``python benchmarks/linear_kernels.py``; ``benchmarks/shapley.py`` prints
the whole-scorer effect); on the AVX2-only Zen 2 EPYC oneDNN's were 1.9x
MKL's too. Both compute in IEEE float32; the outputs agree to float32
rounding. On the AVX2-only Zen 3 EPYC (family 25 model 1) it is the other way
round: MKL's kernels forward SmolLM2 and Gemma-3 faster than the packed ones
(:func:`conflictlab.lm.loading.packing_pays` says where to pack), except for
the few rows of a decoding step, where the weights are read from memory for
a handful of rows: a SmolLM2 step of 8 rows over 100 cached positions took
116.6 ms with MKL and 97.2 ms packed (``python benchmarks/linear_kernels.py
--decode``). There :class:`FewRowsPackedLinear` keeps each layer dense and
multiplies the calls of 2 to ``FEW_ROWS`` rows with a oneDNN copy.

Packing is for inference on the CPU, and comes last: a packed model cannot be
moved to another device or dtype, trained, or saved.
"""

from __future__ import annotations

import torch

# The most rows (the product of the input's leading dimensions) that
# FewRowsPackedLinear sends to oneDNN. A SmolLM2 decoding step on the Zen 3 EPYC
# (family 25 model 1), one thread, over 100 to 600 cached positions: oneDNN's
# time 0.71-0.82x MKL's at 2 rows, 0.79-0.83x at 8, 0.87-1.00x at 16 and
# 0.86-1.06x at 32; at one row MKL's matrix-vector kernel wins (oneDNN 1.06-1.09x)
# (python benchmarks/linear_kernels.py --decode).
FEW_ROWS = 16


class PackedLinear(torch.nn.Module):
    """An ``nn.Linear`` whose weight is held in oneDNN's format, in blocks of
    at most ``block`` output features (all of them by default).

    ``forward`` takes (..., in_features) and returns (..., out_features),
    like the layer it replaces. :meth:`block_outputs` yields the output one
    block at a time, so a caller reducing over a large output (an LM head over
    the vocabulary) never holds all of it. Inputs and outputs are ordinary
    dense tensors: oneDNN reads and writes them in place, with no conversion
    to and from its own tensor type (which, at these sizes, would cost as much
    as the product).
    """

    def __init__(self, linear: torch.nn.Linear, block: int | None = None):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        block = block or self.out_features
        weight = linear.weight.detach()
        bias = None if linear.bias is None else linear.bias.detach()
        self.starts = list(range(0, self.out_features, block))
        # Plain attributes, not buffers: the packed tensors cannot be moved,
        # cast or saved, and nothing should try.
        self.blocks = [
            (
                torch.ops.mkldnn._reorder_linear_weight(weight[s : s + block].contiguous(), None),
                None if bias is None else bias[s : s + block].contiguous(),
            )
            for s in self.starts
        ]

    def block_outputs(self, x: torch.Tensor):
        """(first output feature, output block) pairs; ``x`` has shape (..., in_features),
        each block (..., block)."""
        for start, (weight, bias) in zip(self.starts, self.blocks):
            yield start, torch.ops.mkldnn._linear_pointwise(x, weight, bias, "none", [], "")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outputs = [y for _, y in self.block_outputs(x)]
        return outputs[0] if len(outputs) == 1 else torch.cat(outputs, dim=-1)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, blocks={len(self.blocks)}"


class FewRowsPackedLinear(torch.nn.Linear):
    """An ``nn.Linear`` (the same weight and bias parameters) that multiplies
    calls of 2 to ``max_rows`` rows with a copy of its weight in oneDNN's
    layout, and every other call with MKL's dense kernels, as ``nn.Linear``
    (one row: MKL's matrix-vector product, which beats both).

    For float32 inference on a CPU where MKL is faster for long inputs but
    slower for decoding steps (:func:`conflictlab.lm.loading.packing_pays`).
    The copy is made at the first few-row call, so a job that only forwards
    long inputs never holds it; it is not updated when the weight changes, so
    the layer is for inference only. Calls with gradients enabled always take
    the dense path (oneDNN's kernel has no backward).
    """

    def __init__(self, linear: torch.nn.Linear, max_rows: int = FEW_ROWS):
        super().__init__(linear.in_features, linear.out_features, bias=linear.bias is not None, device="meta")
        self.weight, self.bias = linear.weight, linear.bias
        self.max_rows = max_rows
        self.packed_weight = None  # made at the first few-row call

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.numel() // self.in_features
        if torch.is_grad_enabled() or x.dtype != torch.float32 or not 2 <= rows <= self.max_rows:
            return torch.nn.functional.linear(x, self.weight, self.bias)
        if self.packed_weight is None:
            # a plain tensor even when the first call runs under inference_mode
            with torch.inference_mode(False):
                self.packed_weight = torch.ops.mkldnn._reorder_linear_weight(self.weight.detach(), None)
        return torch.ops.mkldnn._linear_pointwise(x.contiguous(), self.packed_weight, self.bias, "none", [], "")

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, max_rows={self.max_rows}"


def can_pack(model) -> bool:
    """Whether :func:`pack_linear_layers` applies: float32 weights on the CPU, oneDNN built in."""
    parameter = next(model.parameters())
    return (
        parameter.device.type == "cpu"
        and parameter.dtype == torch.float32
        and torch.backends.mkldnn.is_available()
        and hasattr(torch.ops.mkldnn, "_linear_pointwise")
    )


def pack_linear_layers(model, *, head_block: int = 2048) -> int:
    """Replace every ``nn.Linear`` of ``model`` by a :class:`PackedLinear`, in place.

    The output embedding (LM head) is packed in blocks of ``head_block``
    vocabulary rows, the unit in which :func:`conflictlab.lm.likelihood.token_logprobs`
    reduces it. A head tied to the input embedding keeps the embedding dense
    (the packed head is a copy). Does nothing unless :func:`can_pack`.
    Returns the number of layers replaced.
    """
    if not can_pack(model):
        return 0
    head = model.get_output_embeddings()
    return _replace_linear_layers(model, lambda linear: PackedLinear(linear, head_block if linear is head else None))


def pack_few_row_calls(model, *, max_rows: int = FEW_ROWS) -> int:
    """Replace every ``nn.Linear`` of ``model`` by a :class:`FewRowsPackedLinear`
    (sharing its parameters), in place. Does nothing unless :func:`can_pack`.
    Returns the number of layers replaced."""
    if not can_pack(model):
        return 0
    return _replace_linear_layers(model, lambda linear: FewRowsPackedLinear(linear, max_rows))


def _replace_linear_layers(model, wrap) -> int:
    """Put ``wrap(layer)`` in place of every ``nn.Linear`` of ``model`` not wrapped already; returns how many."""
    replaced = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, torch.nn.Linear) and not isinstance(child, FewRowsPackedLinear):
                setattr(parent, name, wrap(child))
                replaced += 1
    return replaced
