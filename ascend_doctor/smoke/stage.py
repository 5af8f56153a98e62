"""The smoke stage: run the scenarios (and optionally the load), then evaluate the registry's stage="smoke" checks."""

from __future__ import annotations

from typing import Any, Callable, Optional

from ascend_doctor.core.errors import InputError
from ascend_doctor.core.evaluator import evaluate
from ascend_doctor.core.options import RunOptions
from ascend_doctor.facts import FactStore
from ascend_doctor.i18n import T
from ascend_doctor.report import Finding
from ascend_doctor.smoke.client import SmokeClient, api_key_from_env, normalize_base_url
from ascend_doctor.smoke.scenarios import SmokeFacts, run_scenarios


def gather(base_url: str, *, model: Optional[str] = None, api_key_env: Optional[str] = None, timeout: float = 60.0,
           load: Optional[int] = None, concurrency: int = 4, load_deadline: Optional[float] = None,
           sentinel: Optional[str] = None,
           progress: Optional[Callable[[str], None]] = None, show_load_progress: bool = False) -> SmokeFacts:
    """Run every scenario against `base_url` (and the load when `load` is given); the `smoke` fact."""
    api_key = api_key_from_env(api_key_env)
    with SmokeClient(base_url, api_key=api_key, timeout=timeout) as client:
        facts = run_scenarios(client, model, sentinel=sentinel, progress=progress)
    if load:
        if not facts.model:
            facts.load_not_run = "no model to load-test: " + (next(iter(facts.not_run.values()), "unresolved"))
        else:
            from ascend_doctor.smoke.load import run_load

            facts.load = run_load(facts.base_url, facts.model, total=load, concurrency=concurrency,
                                  timeout=timeout, api_key=api_key, deadline=load_deadline,
                                  show_progress=show_load_progress)
    return facts


def smoke_checks(registry, options: RunOptions) -> list:
    """The stage="smoke" checks the selection keeps; InputError when it keeps none: a smoke asked for must judge the
    server, never end in "smoke passed" with every smoke check deselected (#40)."""
    checks = registry.select(options.select, options.ignore, stage="smoke")
    if not checks:
        raise InputError(T("the smoke was asked for, but --select/--ignore ({selection}) leave none of its checks "
                           "(SRV, TOOL) to run: add them to --select, or drop the smoke",
                           selection=" ".join([*(f"--select {s}" for s in options.select),
                                               *(f"--ignore {s}" for s in options.ignore)]) or "-"))
    return checks


def evaluate_smoke(registry, facts: SmokeFacts, options: RunOptions, direct: Optional[SmokeFacts] = None
                   ) -> list[Finding]:
    """Evaluate the selected stage="smoke" checks against the gathered fact (and, for SRV106, the same scenarios run
    straight against vLLM when `direct` is given)."""
    checks = smoke_checks(registry, options)
    preset: dict[str, Any] = {"smoke": facts}
    if direct is not None:
        preset["smoke_direct"] = direct
    return evaluate(checks, FactStore.given(preset, options=options), options)


def smoke_findings(registry, *, base_url: str, model: Optional[str] = None, api_key_env: Optional[str] = None,
                   timeout: float = 60.0, options: Optional[RunOptions] = None, **extra: Any) -> list[Finding]:
    """Findings of the smoke stage for `check --smoke-url` and `smoke`."""
    options = options or RunOptions()
    normalize_base_url(base_url)  # a malformed URL is an input error before anything is sent
    smoke_checks(registry, options)  # and so is a selection that leaves no smoke check
    facts = gather(base_url, model=model, api_key_env=api_key_env, timeout=timeout, **extra)
    return evaluate_smoke(registry, facts, options)
