"""Parse a `vllm serve` command line the way the vLLM that will run it does: its option syntax (which options are
flags, which take several values, the short aliases) comes from the matrix per vLLM release (its `vllm_options`
rows), not from a list frozen in code."""

from __future__ import annotations

from typing import Any, Callable, Optional

from ascend_doctor.parsers.serve_cmdline import OptionSyntax, ServeCommand, parse_serve_command


def option_syntax(matrix: Any, vllm_version: Optional[str] = None) -> OptionSyntax:
    """The option syntax of this vLLM release (every recorded release's flags when it is unknown or unrecorded)."""
    flags, multi, aliases = matrix.serve_option_syntax(vllm_version)
    names = matrix.vllm_serve_options(vllm_version) if vllm_version else None
    options = frozenset(n.replace("-", "_") for n in names) if names else frozenset()
    return OptionSyntax(flags=flags, multi=multi, aliases=aliases, options=options,
                        levels=matrix.serve_option_levels(vllm_version))


def parse_serve(argv: list[str], matrix: Any, read_text: Optional[Callable[[str], Optional[str]]] = None,
                keep_secrets: bool = False, vllm_version: Optional[str] = None) -> ServeCommand:
    """`parse_serve_command` with the option syntax of `vllm_version` (see option_syntax) from `matrix` (the run's:
    `Knowledge.matrix`, the user's layers included)."""
    return parse_serve_command(argv, read_text, keep_secrets, syntax=option_syntax(matrix, vllm_version))
