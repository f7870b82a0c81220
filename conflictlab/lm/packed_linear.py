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
(:func:`conflictlab.lm.loading.packing_pays` says where to pack).

Packing is for inference on the CPU, and comes last: a packed model cannot be
moved to another device or dtype, trained, or saved.
"""

from __future__ import annotations

import torch


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
    replaced = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, torch.nn.Linear):
                setattr(parent, name, PackedLinear(child, head_block if child is head else None))
                replaced += 1
    return replaced
