"""fp32 matrix products of a decoder's linear layers: PyTorch's default CPU
kernel (MKL's sgemm) against the same layer packed for oneDNN
(:class:`conflictlab.lm.packed_linear.PackedLinear`), side by side.

    python benchmarks/linear_kernels.py [--model resources/models/smollm2-135m-instruct]
        [--rows 256 1024 2048 4096] [--threads N] [--bf16]
    python benchmarks/linear_kernels.py --forward [--model ...] [--lengths 100 400 800] [--rounds 3]
    python benchmarks/linear_kernels.py --decode [--model ...] [--batches 1 4 8 16 32] [--cached 100 600] [--rounds 3]

The layer shapes come from the model's ``config.json`` (attention, MLP, and
one 2,048-row block of the LM head); weights and inputs are random. Prints
GFLOP/s of each kernel and their ratio per shape and row count, and the
largest difference between the two outputs.

``--bf16`` (a CPU with native bfloat16: avx512_bf16 or AMX) adds two ways
of using it, each against the oneDNN float32 kernel: plain bfloat16 (inputs,
weights and outputs rounded), and three bfloat16 products that keep nearly
float32 accuracy, x_hi·W_hi + x_hi·W_lo + x_lo·W_hi (a = a_hi + a_lo, both
bfloat16; :class:`SplitBF16Linear`), summed in float32. PyTorch returns a
bfloat16 product in bfloat16, so the split runs as one float32 product over
the three stacked pairs under oneDNN's ``fp32_precision = "bf16"``, which
rounds its exactly representable inputs losslessly and accumulates and
returns float32. Its GFLOP/s are those of the float32 product it stands for,
splitting included. (README, Shapley attribution: why the scorer keeps
float32.)

``--forward`` compares the two kernels where a job meets them: the prepared
model loaded twice in one process, packed and not, forwarding 8 random
prompts of each length (the last position's logits, as the read-outs and a
prefill do) on one thread, the two alternating in every round. It prints CPU
seconds of each, their ratio, and what
:func:`conflictlab.lm.loading.packing_pays` decides on this CPU.

``--decode`` times decoding steps, where the weights are read from memory for
a few rows each: the model loaded three ways in one process (MKL alone, every
layer packed, and packed for the calls of up to ``FEW_ROWS`` rows only,
:class:`conflictlab.lm.packed_linear.FewRowsPackedLinear`), one new token for
each of ``batch`` rows on top of a key/value cache of ``cached`` random
positions, one thread, the three alternating; CPU milliseconds a step.
"""

from __future__ import annotations

import argparse
import time


def gflops(layer, x, seconds_target: float = 0.5) -> float:
    import torch

    with torch.inference_mode():
        for _ in range(3):
            layer(x)
        reps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds_target:
            layer(x)
            reps += 1
        seconds = (time.perf_counter() - start) / reps
    return 2 * x.shape[0] * layer.in_features * layer.out_features / seconds / 1e9


class SplitBF16Linear:
    """y = x_hi·W_hi + x_hi·W_lo + x_lo·W_hi for a float32 (in_features,
    out_features) layer: one float32 product of (rows, 3·in) by (3·in, out),
    every operand a bfloat16 value, under oneDNN's bfloat16 math mode."""

    def __init__(self, linear):
        import torch

        self.in_features, self.out_features = linear.in_features, linear.out_features
        w = linear.weight.detach()
        w_hi = w.bfloat16().float()
        w_lo = (w - w_hi).bfloat16().float()
        with bf16_math():
            self.weight = torch.ops.mkldnn._reorder_linear_weight(torch.cat([w_hi, w_lo, w_hi], dim=1), None)

    def __call__(self, x):
        import torch

        x_hi = x.bfloat16()
        x_lo = (x - x_hi.float()).bfloat16()
        stacked = torch.cat([x_hi, x_hi, x_lo], dim=1).float()
        with bf16_math():
            return torch.ops.mkldnn._linear_pointwise(stacked, self.weight, None, "none", [], "")


class bf16_math:
    """oneDNN's float32 matrix products in its bfloat16 math mode, inside the block."""

    def __enter__(self):
        import torch

        self.before = torch.backends.mkldnn.matmul.fp32_precision
        torch.backends.mkldnn.matmul.fp32_precision = "bf16"

    def __exit__(self, *exc):
        import torch

        torch.backends.mkldnn.matmul.fp32_precision = self.before


def forward_seconds(model_dir: str, lengths: list[int], rounds: int) -> dict[bool, float]:
    """CPU seconds of whole-model forwards, packed (True) and with MKL (False)."""
    import torch

    from conflictlab.lm.loading import load

    torch.set_num_threads(1)
    models = {packed: load(model_dir, dtype="float32", pack=packed).model for packed in (True, False)}
    seconds = {True: 0.0, False: 0.0}
    torch.manual_seed(0)
    for r in range(rounds):
        for length in lengths:
            ids = torch.randint(100, 20000, (8, length))
            for packed in (True, False) if r % 2 == 0 else (False, True):
                with torch.inference_mode():
                    start = time.process_time()
                    models[packed](input_ids=ids, logits_to_keep=1)
                    seconds[packed] += time.process_time() - start
    return seconds


def decode_milliseconds(model_dir: str, batches, cached, rounds: int, steps: int = 8) -> dict:
    """CPU ms per decoding step, {(way, batch, cached): ms}, the three ways alternating."""
    import torch

    from conflictlab.lm.loading import load
    from conflictlab.lm.packed_linear import pack_few_row_calls

    torch.set_num_threads(1)
    ways = {"MKL": load(model_dir, dtype="float32", pack=False).model}
    ways["packed"] = load(model_dir, dtype="float32", pack=True).model
    ways["few rows packed"] = load(model_dir, dtype="float32", pack=False).model
    pack_few_row_calls(ways["few rows packed"])
    totals: dict = {}
    torch.manual_seed(0)
    for r in range(rounds):
        for length in cached:
            for batch in batches:
                ids = torch.randint(100, 20000, (batch, length))
                step = torch.randint(100, 20000, (batch, 1))
                order = list(ways) if r % 2 == 0 else list(reversed(ways))
                for way in order:
                    model = ways[way]
                    with torch.inference_mode():
                        cache = model(input_ids=ids, use_cache=True, logits_to_keep=1).past_key_values
                        model(input_ids=step, past_key_values=cache, use_cache=True, logits_to_keep=1)
                        start = time.process_time()
                        for _ in range(steps):
                            model(input_ids=step, past_key_values=cache, use_cache=True, logits_to_keep=1)
                        seconds = time.process_time() - start
                    key = (way, batch, length)
                    totals[key] = totals.get(key, 0.0) + seconds * 1000 / steps / rounds
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resources/models/smollm2-135m-instruct")
    parser.add_argument("--rows", type=int, nargs="+", default=[256, 1024, 2048, 4096])
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument(
        "--bf16", action="store_true", help="add plain bfloat16 and the three-product split (CPUs with native bfloat16)"
    )
    parser.add_argument("--forward", action="store_true", help="whole-model forwards, packed against MKL")
    parser.add_argument("--lengths", type=int, nargs="+", default=[100, 400, 800], help="--forward: prompt lengths")
    parser.add_argument("--rounds", type=int, default=3, help="--forward, --decode: rounds, the kernels alternating")
    parser.add_argument("--decode", action="store_true", help="decoding steps: MKL, packed, packed for few rows")
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 4, 8, 16, 32], help="--decode: rows a step")
    parser.add_argument("--cached", type=int, nargs="+", default=[100, 600], help="--decode: cached positions")
    args = parser.parse_args()

    import torch

    if args.decode:
        from conflictlab.lm.loading import cpu_kind
        from conflictlab.lm.packed_linear import FEW_ROWS

        kind = cpu_kind()
        ms = decode_milliseconds(args.model, args.batches, args.cached, args.rounds)
        print(
            f"{args.model} on {kind.vendor} family {kind.family} model {kind.model}, one thread, {args.rounds} "
            f"rounds: CPU ms per decoding step (FEW_ROWS = {FEW_ROWS})"
        )
        print(f"{'cached':>7}{'rows':>6}{'MKL':>9}{'packed':>9}{'few rows':>10}{'packed/MKL':>12}{'few/MKL':>9}")
        for length in args.cached:
            for batch in args.batches:
                mkl, packed, few = (ms[(way, batch, length)] for way in ("MKL", "packed", "few rows packed"))
                print(
                    f"{length:>7}{batch:>6}{mkl:>9.1f}{packed:>9.1f}{few:>10.1f}{packed / mkl:>12.2f}{few / mkl:>9.2f}"
                )
        return

    if args.forward:
        from conflictlab.lm.loading import cpu_kind, packing_pays

        kind = cpu_kind()
        seconds = forward_seconds(args.model, args.lengths, args.rounds)
        print(
            f"{args.model} on {kind.vendor} family {kind.family} model {kind.model}: 8 x {args.lengths} tokens, "
            f"{args.rounds} rounds, one thread: packed {seconds[True]:.2f} CPU s, MKL {seconds[False]:.2f} CPU s, "
            f"packed/MKL {seconds[True] / seconds[False]:.3f}; packing_pays() = {packing_pays(kind)}"
        )
        return

    if args.threads:
        torch.set_num_threads(args.threads)
    if args.bf16 and not torch.ops.mkldnn._is_mkldnn_bf16_supported():
        raise SystemExit("--bf16: this CPU has no native bfloat16 for oneDNN (avx512_bf16 or AMX)")
    from transformers import AutoConfig

    from conflictlab.lm.packed_linear import PackedLinear

    config = AutoConfig.from_pretrained(args.model)
    config = config.get_text_config() if hasattr(config, "get_text_config") else config
    d, ffn = config.hidden_size, config.intermediate_size
    head_dim = getattr(config, "head_dim", None) or d // config.num_attention_heads
    shapes = {
        "q_proj": (d, config.num_attention_heads * head_dim),
        "k_proj/v_proj": (d, config.num_key_value_heads * head_dim),
        "gate/up_proj": (d, ffn),
        "down_proj": (ffn, d),
        "lm_head block": (d, 2048),
    }
    torch.manual_seed(0)
    print(f"{args.model}: {torch.get_num_threads()} threads")
    extra = (
        f"{'bf16 x3 GFLOP/s':>17}{'ratio':>7}{'max |dy|':>10}{'bf16 GFLOP/s':>14}{'ratio':>7}{'max |dy|':>10}"
        if args.bf16
        else ""
    )
    print(
        f"{'layer':<15}{'in x out':>12}{'rows':>7}{'MKL GFLOP/s':>13}{'oneDNN GFLOP/s':>16}{'ratio':>7}{'max |dy|':>10}"
        + extra
    )
    for name, (n_in, n_out) in shapes.items():
        plain = torch.nn.Linear(n_in, n_out, bias=False)
        packed = PackedLinear(plain)
        if args.bf16:
            split = SplitBF16Linear(plain)
            half_linear = torch.nn.Linear(n_in, n_out, bias=False, dtype=torch.bfloat16)
            with torch.no_grad():
                half_linear.weight.copy_(plain.weight)
            half = PackedLinear(half_linear)
        for rows in args.rows:
            x = torch.randn(rows, n_in)
            with torch.inference_mode():
                dy = (plain(x) - packed(x)).abs().max().item()
            mkl, onednn = gflops(plain, x), gflops(packed, x)
            line = (
                f"{name:<15}{f'{n_in}x{n_out}':>12}{rows:>7}{mkl:>13.0f}{onednn:>16.0f}{onednn / mkl:>7.2f}{dy:>10.1e}"
            )
            if args.bf16:
                exact = x.double() @ plain.weight.detach().double().T
                x_half = x.bfloat16()
                with torch.inference_mode():
                    dy_split = (split(x).double() - exact).abs().max().item()
                    dy_half = (half(x_half).double() - exact).abs().max().item()
                split_rate, half_rate = gflops(split, x), gflops(half, x_half)
                line += f"{split_rate:>17.0f}{split_rate / onednn:>7.2f}{dy_split:>10.1e}"
                line += f"{half_rate:>14.0f}{half_rate / onednn:>7.2f}{dy_half:>10.1e}"
            print(line)


if __name__ == "__main__":
    main()
