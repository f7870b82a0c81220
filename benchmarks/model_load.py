"""Why prepare_model exists: loading a de-quantised GGUF file on every job vs
loading the prepared safetensors folder, measured side by side in one run.

    python benchmarks/model_load.py [--model resources/models/smollm2-135m-instruct]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM

from conflictlab.lm.registry import ModelSource, locate_gguf, read_manifest


def best_of(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resources/models/smollm2-135m-instruct")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    source = ModelSource.parse(read_manifest(args.model)["source"])
    if source.kind != "gguf-package":
        raise SystemExit(f"{args.model}: source {source} is not a packaged GGUF file")
    gguf = locate_gguf(source.location, Path(args.model))
    from_gguf = best_of(
        lambda: AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32),
        args.repeats,
    )
    from_folder = best_of(lambda: AutoModelForCausalLM.from_pretrained(args.model), args.repeats)
    print(f"load from GGUF (de-quantise): {from_gguf:8.2f} s")
    print(f"load prepared folder:         {from_folder:8.2f} s")
    print(f"ratio:                        {from_gguf / from_folder:8.1f}x")


if __name__ == "__main__":
    main()
