"""The `serve/release-features` rows on how vllm-ascend looks layers up in an msModelSlim description, held to the
stored sdists: for every release, the row holds exactly where the release's own quantization config does what the row
says (SERVE211 reads them)."""

from __future__ import annotations

import pytest

from ascend_doctor.knowledge.door import Knowledge
from tests.matrix.stored import VA_SDISTS, per_release

MAIN = ("vllm_ascend/quantization/quant_config.py", "vllm_ascend/quantization/modelslim_config.py",
        "vllm_ascend/quantization/configs/modelslim_config.py")
P310 = "vllm_ascend/_310p/quantization/modelslim_config.py"
EMBEDDING = "isinstance(layer, VocabParallelEmbedding)"
ABSENT = 'quant_description.get(prefix + ".weight")'


def _said(read) -> dict:
    """What one release's source does: feature id -> bool."""
    main = "\n".join(read(p) or "" for p in MAIN)
    p310 = read(P310) or ""
    branch = p310.split(EMBEDDING, 1)[1].split("return super()", 1)[0] if EMBEDDING in p310 else ""
    return {
        "modelslim-embedding-lookup": EMBEDDING in main and "No ModelSlim quant entry" not in main
        and ABSENT not in main,
        "modelslim-310p-embedding-unquantized": "Unquantized" in branch and "quant_description[" not in branch,
        "modelslim-absent-layer-unquantized": ABSENT in main,
    }


@pytest.mark.skipif(not VA_SDISTS, reason="the vllm-ascend sdists are not stored here")
def test_the_lookup_rows_hold_exactly_where_the_release_source_says_so():
    features = Knowledge().release_features
    said = per_release(_said)
    assert len(said) >= 40
    for version, (does, _) in said.items():
        for fid, expected in does.items():
            assert features.has(fid, version) is expected, (fid, version)


def test_the_predicates_read_the_source_shapes():
    old = {MAIN[0]: f"        elif {EMBEDDING}:\n            if self.is_layer_skipped_ascend(prefix"}
    new = {MAIN[2]: f"        elif {EMBEDDING}:\n  quant_type = {ABSENT}", P310: f"elif {EMBEDDING}:\n"
           "    return AscendUnquantizedEmbeddingMethod310()\n    return super().get_quant_method(layer, prefix)"}
    assert _said(old.get) == {"modelslim-embedding-lookup": True, "modelslim-310p-embedding-unquantized": False,
                              "modelslim-absent-layer-unquantized": False}
    assert _said(new.get) == {"modelslim-embedding-lookup": False, "modelslim-310p-embedding-unquantized": True,
                              "modelslim-absent-layer-unquantized": True}
