"""The environment `vllm serve` will see (the `server_env` fact): what it inherits, with the command line's own
`env K=V` assignments over it, and which names the command set."""

from __future__ import annotations

from typing import Mapping, Optional


class ServerEnv(dict):
    """A dict of the server's variables (read it as any environment), plus `from_command`: the names the command
    line's `env K=V` set or replaced, so a finding can say where a value came from."""

    from_command: frozenset = frozenset()

    @classmethod
    def of(cls, inherited: Optional[Mapping[str, str]], command: Optional[Mapping[str, str]]) -> "ServerEnv":
        env = cls(inherited or {})
        env.update(command or {})
        env.from_command = frozenset(command or ())
        return env

    def where(self, name: str) -> str:
        """'env' or 'command line env' — the evidence label of one variable."""
        return "command line env" if name in self.from_command else "env"
