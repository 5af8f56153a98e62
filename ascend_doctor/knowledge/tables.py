"""Every table the doctor ships under matrices/, named once: its file, its schema, how its rows are identified.

A table's name is its file under matrices/ without `.toml` (`serve/tool-parser-issues`); a `--matrix FILE` layer says
`table = "serve/tool-parser-issues"` to extend it (no `table` key: the compatibility matrix, the top-level files).
Rows of a layer replace the shipped row with the same id and add the others; other keys replace the shipped value,
tables (dicts) key by key. The schema validates the merged table, so a layer is held to the same rules as the
shipped file, and an error names the layer and the row as the layer numbers it.

Adding a table: its file under matrices/, its schema (a pydantic model beside the code that uses it), one `Table`
here, one property on `Knowledge` (ascend_doctor/knowledge/door.py). tests/knowledge/test_tables.py fails on a file
under matrices/ that no table names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

MATRIX = "matrix"  # the compatibility matrix: every top-level matrices/*.toml but host-policy.toml


@dataclass(frozen=True)
class Table:
    name: str
    schema: str  # "module:Class", imported when the table is first used
    what: str  # how its errors name it
    rows: dict[str, str] = field(default_factory=dict)  # row array -> the field that identifies a row
    # row array -> fields holding a path relative to the file that declares the row (made absolute when read)
    paths: dict[str, tuple[str, ...]] = field(default_factory=dict)
    version_ids: bool = False  # row ids are versions: `v0.13.0` and `0.13.0` are one row
    # "module:function" run on the validated table (checks a schema cannot express); InputError on a problem
    verify: Optional[str] = None


TABLES: dict[str, Table] = {t.name: t for t in (
    Table("host-policy", "ascend_doctor.knowledge.policy:HostPolicy", "host policy"),
    Table("compute/compute-smoke", "ascend_doctor.compute.policy:ComputePolicy", "compute policy",
          rows={"op": "name"}),
    Table("depcheck/dependency-allowlist", "ascend_doctor.knowledge.depcheck:AllowList", "dependency allow-list",
          rows={"allow": "id"}),
    Table("deploy/chips", "ascend_doctor.deploy.chips:ChipTable", "chip table", rows={"chip": "id"}),
    Table("deploy/hybrid-pages", "ascend_doctor.deploy.hybrid:PageRules", "hybrid page rules",
          rows={"range": "first"}),
    Table("deploy/dsa-pages", "ascend_doctor.deploy.dsa:DsaRules", "DSA cache rules", rows={"range": "first"}),
    Table("deploy/replication", "ascend_doctor.deploy.replication:ReplicationRules", "replication rules",
          rows={"range": "id"}),
    Table("deploy/runtime-reserve", "ascend_doctor.deploy.reserve:ReserveRules", "runtime-reserve rules",
          rows={"range": "first"}),
    Table("deploy/hccl-groups", "ascend_doctor.deploy.hccl:HcclRules", "HCCL group rules", rows={"range": "first"}),
    Table("deploy/kernels", "ascend_doctor.knowledge.hardware:KernelLayout", "kernel layout"),
    Table("deploy/models", "ascend_doctor.deploy.catalogue:Catalogue", "model catalogue", rows={"model": "id"},
          paths={"model": ("config",)}, verify="ascend_doctor.deploy.catalogue:verify"),
    Table("serve/additional-config", "ascend_doctor.knowledge.additional_config:AdditionalConfigTable",
          "additional-config table", rows={"release": "version"}, version_ids=True),
    Table("serve/names-vllm", "ascend_doctor.knowledge.release_names:NamesTable", "vLLM names table",
          rows={"release": "version"}, version_ids=True),
    Table("serve/names-vllm-ascend", "ascend_doctor.knowledge.release_names:NamesTable", "vllm-ascend names table",
          rows={"release": "version"}, version_ids=True),
    Table("serve/support-matrix", "ascend_doctor.knowledge.support_matrix:SupportMatrixTable",
          "support-matrix table", rows={"release": "version"}, version_ids=True),
    Table("serve/kv-pool-env", "ascend_doctor.knowledge.kv_pool_env:KvPoolEnv", "KV-pool host requirements",
          rows={"requirement": "id"}),
    Table("serve/images", "ascend_doctor.knowledge.images:ImageTable", "official image recipes", rows={"image": "id"}),
    Table("serve/flashcomm-vl", "ascend_doctor.knowledge.flashcomm_vl:FlashcommVl", "FlashComm1 on VL models",
          rows={"release": "id"}),
    Table("serve/quant-schemes", "ascend_doctor.knowledge.quant_schemes:QuantSchemes",
          "quantization methods per release", rows={"release": "id"}),
    Table("serve/known-issues", "ascend_doctor.knowledge.known_issues:KnownIssues", "known-issues table",
          rows={"known_issue": "id"}),
    Table("serve/open-bugs", "ascend_doctor.knowledge.open_bugs:OpenBugs", "open-bugs table",
          rows={"open_bug": "id"}),
    Table("serve/release-changes", "ascend_doctor.knowledge.release_changes:ReleaseChanges",
          "release-changes table", rows={"change": "id"}),
    Table("serve/graph-budget", "ascend_doctor.deploy.graphs:GraphBudgetFile", "graph budget"),
    Table("serve/host-attn-mask", "ascend_doctor.knowledge.host_mask:HostMask", "host attention mask",
          rows={"prebuilt": "vllm_ascend"}),
    Table("serve/lora", "ascend_doctor.knowledge.lora:LoraRules", "LoRA rules"),
    Table("serve/release-features", "ascend_doctor.knowledge.release_features:ReleaseFeatures", "release features",
          rows={"feature": "id"}),
    Table("serve/release-rules", "ascend_doctor.knowledge.release_rules:ReleaseRules", "release rules",
          rows={"release_rule": "id"}),
    Table("serve/start-checks", "ascend_doctor.knowledge.additional_config:StartChecks", "start checks",
          rows={"start_check": "id"}),
    Table("serve/sequence-parallel", "ascend_doctor.knowledge.sequence_parallel:SequenceParallel",
          "sequence-parallel table", rows={"rounding": "vllm", "sp": "vllm_ascend"}),
    Table("serve/tool-parser-issues", "ascend_doctor.knowledge.parser_issues:ParserIssues", "tool-parser issues",
          rows={"parser_issue": "id"}),
    Table("signatures/error-signatures", "ascend_doctor.knowledge.signatures:SignatureFile", "signature catalogue",
          rows={"signature": "id"}),
    Table("signatures/release-fixes", "ascend_doctor.knowledge.release_fixes:ReleaseFixes", "release-fixes table",
          rows={"fix": "sha"}),
    Table("signatures/release-refusals", "ascend_doctor.knowledge.refusals:ReleaseRefusals",
          "release-refusals table", rows={"refusal": "id"}),
)}


def describe() -> list[str]:
    """One line per table: the name a layer gives, its shipped file, what identifies a row (`matrix tables`)."""
    from ascend_doctor.i18n import T

    out = [T("{name}: matrices/*.toml but host-policy.toml — the compatibility matrix (a layer without a `table` key)",
             name=MATRIX)]
    for t in TABLES.values():
        rows = ", ".join(f"[[{k}]] by {v}" for k, v in t.rows.items()) or T("settings, merged key by key")
        out.append(f"{t.name}: matrices/{t.name}.toml — {t.what}; {rows}")
    return out


def resolve(dotted: str) -> Any:
    """The object `module:attr` names."""
    import importlib

    module, _, attr = dotted.partition(":")
    return getattr(importlib.import_module(module), attr)


def verifier(t: Table) -> Optional[Callable[[Any, str], None]]:
    return resolve(t.verify) if t.verify else None
