"""What a model job pays to import torch and transformers' model code, with
transformers' scikit-learn and scipy probes left on and turned off
(``conflictlab.lm.loading.without_unused_probes``), and with the index of
transformers' model code scanned or kept in the user's cache folder
(``conflictlab.lm.loading.remember_transformers_model_index``, which
``without_unused_probes`` calls), side by side.

    python benchmarks/job_imports.py [--rounds 3]

Each variant runs in a fresh interpreter, alternating, and imports what a
generation job does first (``AutoTokenizer``, which reaches assisted
generation) and then the Llama model code; the figure is the child's user +
system CPU seconds (``wait4``), interpreter start included.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

IMPORTS = "import torch; from transformers import AutoTokenizer; import transformers.models.llama.modeling_llama"
OFF = "from conflictlab.lm import loading; "
VARIANTS = {
    "probes on": IMPORTS,
    "probes off, index scanned": (
        f"{OFF}loading.remember_transformers_model_index = lambda cache_file=None: None; "
        f"loading.without_unused_probes(); {IMPORTS}"
    ),
    "probes off, index kept": f"{OFF}loading.without_unused_probes(); {IMPORTS}",
}
CHECK = "; import sys; print(sorted({m.split('.')[0] for m in sys.modules} & {'sklearn', 'scipy', 'pandas'}))"


def cpu_seconds(code: str) -> tuple[float, str]:
    """CPU seconds of a fresh interpreter running ``code``, and what it printed."""
    process = subprocess.Popen([sys.executable, "-c", code + CHECK], stdout=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(process.pid, 0)
    printed = process.stdout.read().strip()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{code!r} failed")
    return usage.ru_utime + usage.ru_stime, printed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    seconds: dict[str, list[float]] = {name: [] for name in VARIANTS}
    imported: dict[str, str] = {}
    for _ in range(args.rounds):
        for name, code in VARIANTS.items():
            cpu, imported[name] = cpu_seconds(code)
            seconds[name].append(cpu)
    for name, values in seconds.items():
        print(f"{name}: " + ", ".join(f"{v:.2f}" for v in values) + f" CPU s (also imported: {imported[name]})")
    on, scanned, kept = (sum(seconds[name]) for name in VARIANTS)
    print(f"probes on / off: {on / scanned:.2f}; index scanned / kept: {scanned / kept:.2f}")


if __name__ == "__main__":
    main()
