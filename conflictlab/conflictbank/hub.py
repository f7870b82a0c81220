"""ConflictBank records from the Hugging Face hub (``Warrieryes/CB_qa``).

Apart from :mod:`conflictlab.conflictbank.dataset` so that only the rule that
reads the hub needs the ``datasets`` package.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def hub_records(dataset: str, *, revision: str | None, split: str = "train") -> Iterable[tuple[int, Any]]:
    """(row index, record) of the hub dataset (``datasets.load_dataset``; needs
    the hub or its cache, ``HF_DATASETS_OFFLINE`` honoured), for
    :func:`conflictlab.conflictbank.dataset.build_records`."""
    from datasets import load_dataset

    yield from enumerate(load_dataset(dataset, revision=revision, split=split))
