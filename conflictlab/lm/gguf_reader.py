"""A ``gguf.GGUFReader`` that maps the elements of an array field in bulk.

``gguf.GGUFReader`` walks an array field element by element, slicing its
``numpy.memmap`` twice per string and once per number; each slice runs the
memmap's Python-level ``__array_finalize__``. Gemma-3's vocabulary (262,144
tokens, with a score and a type each) costs 12.8 CPU s that way on a Zen 3.
:class:`BulkArrayReader` gives every field the same parts, data indices and
types, but views a numeric array once and cuts it into its elements in C,
and reads each string's length with ``struct`` before slicing a plain
ndarray: about 0.3 s for the same vocabulary.

Only rule prepare_model's environment (envs/gguf.yaml) has ``gguf``, and other
rules' scripts reach this module through :mod:`conflictlab.lm.registry`; so
``gguf`` is imported by name (as the registry imports it), when
``BulkArrayReader`` is first asked for, and the import tracer of
:mod:`conflictlab.provenance` sees this module (its code hash) but no
``gguf`` in their environments.
"""

from __future__ import annotations

import functools
import importlib
import struct

import numpy as np

_LENGTH = struct.Struct("=Q")  # a string's uint64 length, in the host's order like the reader's 'I'


@functools.cache
def _reader_class():
    gguf = importlib.import_module("gguf")

    class BulkArrayReader(gguf.GGUFReader):
        """``gguf.GGUFReader`` with a faster path for arrays of numbers or strings in the host's byte order.

        Arrays of arrays, and files of the opposite byte order, take the parent's path.
        """

        def _get_field_parts(self, orig_offs: int, raw_type: int):
            if gguf.GGUFValueType(raw_type) != gguf.GGUFValueType.ARRAY or self.byte_order != "I":
                return super()._get_field_parts(orig_offs, raw_type)
            raw_itype = self._get(orig_offs, np.uint32)
            alen = self._get(orig_offs + raw_itype.nbytes, np.uint64)
            start = orig_offs + raw_itype.nbytes + alen.nbytes
            item_type = gguf.GGUFValueType(raw_itype[0])
            count = int(alen[0])
            if item_type == gguf.GGUFValueType.STRING:
                elements, end = self._strings(start, count)
            elif (numpy_type := self.gguf_scalar_to_np.get(item_type)) is not None:
                values = np.asarray(self._get(start, numpy_type, count))
                elements, end = list(values.reshape(count, 1)), start + values.nbytes
            else:
                return super()._get_field_parts(orig_offs, raw_type)
            # as the parent lays them out: type, length, then each element's parts; a string's data is its second part
            per_element = 2 if item_type == gguf.GGUFValueType.STRING else 1
            first = 2 + per_element - 1
            data_idxs = list(range(first, first + per_element * count, per_element))
            types = [gguf.GGUFValueType.ARRAY, item_type] if count else [gguf.GGUFValueType.ARRAY]
            return end - orig_offs, [raw_itype, alen, *elements], data_idxs, types

        def _strings(self, offs: int, count: int) -> tuple[list[np.ndarray], int]:
            """Each string's (uint64 length, uint8 bytes) parts, as the parent's ``_get_str`` gives them."""
            data = np.asarray(self.data)  # a plain view of the map: slicing it skips memmap's finaliser
            parts = []
            for _ in range(count):
                (length,) = _LENGTH.unpack_from(data, offs)
                parts.append(data[offs : offs + 8].view(np.uint64))
                parts.append(data[offs + 8 : offs + 8 + length])
                offs += 8 + length
            return parts, offs

    return BulkArrayReader


def __getattr__(name: str):
    if name == "BulkArrayReader":
        return _reader_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
