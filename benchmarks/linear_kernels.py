"""fp32 matrix products of a decoder's linear layers: PyTorch's default CPU
kernel (MKL's sgemm) against the same layer packed for oneDNN
(:class:`conflictlab.lm.packed_linear.PackedLinear`), side by side.

    python benchmarks/linear_kernels.py [--model resources/models/smollm2-135m-instruct]
        [--rows 256 1024 2048 4096]

The layer shapes come from the model's ``config.json`` (attention, MLP, and
one 2,048-row block of the LM head); weights and inputs are random. Prints
GFLOP/s of each kernel and their ratio per shape and row count, and the
largest difference between the two outputs.
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resources/models/smollm2-135m-instruct")
    parser.add_argument("--rows", type=int, nargs="+", default=[256, 1024, 2048, 4096])
    args = parser.parse_args()

    import torch
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
    print(f"{'layer':<15}{'in x out':>12}{'rows':>7}{'MKL GFLOP/s':>13}{'oneDNN GFLOP/s':>16}{'ratio':>7}{'max |dy|':>10}")
    for name, (n_in, n_out) in shapes.items():
        plain = torch.nn.Linear(n_in, n_out, bias=False)
        packed = PackedLinear(plain)
        for rows in args.rows:
            x = torch.randn(rows, n_in)
            with torch.inference_mode():
                dy = (plain(x) - packed(x)).abs().max().item()
            mkl, onednn = gflops(plain, x), gflops(packed, x)
            print(f"{name:<15}{f'{n_in}x{n_out}':>12}{rows:>7}{mkl:>13.0f}{onednn:>16.0f}{onednn / mkl:>7.2f}{dy:>10.1e}")


if __name__ == "__main__":
    main()
