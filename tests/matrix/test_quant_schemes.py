"""The serve/quant-schemes table: matrix sync reads the quantization methods each release builds, in the three shapes
its code has taken (quantizer classes, a method map, a scheme registry); the shipped rows are what it extracts from
the stored PyPI sdists (skipped on a plain clone)."""

from __future__ import annotations

import pytest

from ascend_doctor.knowledge.door import Knowledge
from ascend_doctor.sync.quant_schemes import ENVS, METHOD_MAP, QUANTIZER, merge_quant_schemes, read_quant_schemes
from tests.matrix.stored import VA_SDISTS as SDISTS

QUANTIZER_TEXT = '''import importlib

class VLLMAscendQuantizer:
    @staticmethod
    def build_linear_method():
        raise NotImplementedError("Linear method is not implemented for the current quant type.")

    @staticmethod
    def build_moe_method():
        raise NotImplementedError("MoE method is not implemented for the current quant type.")


class AscendQuantizer:
    def get_quantizer(cls):
        module = importlib.import_module("mindie_turbo")


class W8A8Quantizer(VLLMAscendQuantizer):
    @staticmethod
    def build_linear_method():
        return AscendW8A8LinearMethod()


class W8A8DYNAMICQuantizer(W8A8Quantizer):
    @staticmethod
    def build_moe_method():
        """The MoE method."""
        return AscendW8A8DynamicFusedMoEMethod()


SUPPORT_ASCEND_QUANTIZER_TYPE = {
    "W8A8": W8A8Quantizer,
    "W8A8_DYNAMIC": W8A8DYNAMICQuantizer,
}
'''

METHOD_MAP_TEXT = '''ASCEND_QUANTIZATION_METHOD_MAP: Dict[str, Dict[str, Type[Any]]] = {
    "W4A8_DYNAMIC": {
        "linear": AscendW4A8DynamicLinearMethod,
        "moe": AscendW4A8DynamicFusedMoEMethod,
    },
    "C8": {"attention": AscendC8KVCacheMethod},
}
'''

W4A8_TEXT = '''from vllm_ascend.utils import maybe_trans_nz


@register_scheme("W4A8_DYNAMIC", "linear")
class AscendW4A8DynamicLinearMethod(AscendLinearScheme):
    def __init__(self):
        self.group_size = vllm_config.quant_config.quant_description.get("group_size", 256)

    def process_weights_after_loading(self, layer):
        layer.weight.data = maybe_trans_nz(layer.weight.data)


@register_scheme("W4A8_DYNAMIC", "moe")
class AscendW4A8DynamicFusedMoEMethod(AscendMoEScheme):
    pass
'''


def _row(files: dict) -> dict:
    dirs: dict = {}
    for path in files:
        parts = path.split("/")
        for i in range(1, len(parts)):
            dirs.setdefault("/".join(parts[:i]), set()).add(parts[i])
    rows = read_quant_schemes(files.get, lambda p: sorted(dirs[p]) if p in dirs else None)
    assert len(rows) <= 1
    return rows[0] if rows else {}


def test_quantizer_classes_count_the_build_methods_that_do_more_than_raise_and_those_they_inherit():
    row = _row({QUANTIZER: QUANTIZER_TEXT})
    assert row["schemes"] == {"W8A8": ["linear"], "W8A8_DYNAMIC": ["linear", "moe"]}
    assert row["how"] == "quantizer classes" and row["mindie_turbo"] is True
    assert row["where"] == [f"{QUANTIZER}:31"]


def test_a_method_map_and_a_registry_with_the_w4a8_nz_cast():
    row = _row({METHOD_MAP: METHOD_MAP_TEXT})
    assert row["schemes"] == {"W4A8_DYNAMIC": ["linear", "moe"], "C8": ["attention"]} and row["how"] == "method map"
    assert row["w4a8_linear_nz"] is False and row["mindie_turbo"] is False
    row = _row({"vllm_ascend/quantization/methods/w4a8.py": W4A8_TEXT,
                ENVS: '    "VLLM_ASCEND_ENABLE_NZ": lambda: int(os.getenv("VLLM_ASCEND_ENABLE_NZ", 1)),'})
    assert row["schemes"] == {"W4A8_DYNAMIC": ["linear", "moe"]} and row["how"] == "registry"
    assert row["w4a8_linear_nz"] is True and row["w4a8_group_default"] == 256 and row["nz_default"] == 1
    assert row["where"] == ["vllm_ascend/quantization/methods/w4a8.py:4"]
    assert _row({"vllm_ascend/quantization/quant_config.py": "x = 1"}) == {}  # the mindie_turbo-only era


def test_releases_that_build_the_same_share_a_row():
    a = read_quant_schemes({METHOD_MAP: METHOD_MAP_TEXT}.get, lambda p: None)
    merged = merge_quant_schemes({"0.11.0": (a, "pypi:b"), "0.10.2rc1": (a, "pypi:a")})
    (row,) = merged.values()
    assert row["releases"] == ["0.10.2rc1", "0.11.0"] and row["source"] == [f"pypi:b:{METHOD_MAP}:1"]


def test_the_table_answers_by_release():
    t = Knowledge().quant_schemes
    assert t.row_of("0.18.0rc1").w4a8_linear_nz and not t.row_of("0.12.0rc1").w4a8_linear_nz
    assert "linear" not in t.row_of("0.27.1rc1").schemes["W4A8_DYNAMIC"]
    assert t.row_of("0.7.3") is None and t.row_of("0.99.0") is None


@pytest.mark.skipif(not SDISTS, reason="the vllm-ascend sdists are not stored here")
def test_the_shipped_rows_are_what_sync_extracts_from_the_sdists():
    from tests.matrix.stored import assert_shipped_rows_are, per_release

    assert_shipped_rows_are(merge_quant_schemes(per_release(read_quant_schemes, listdir=True)),
                            {r.id: r.model_dump() for r in Knowledge().quant_schemes.release})
