"""The environment `vllm serve` will see (the `server_env` fact): what it inherits, with the command line's own
`env K=V` assignments over it, and which names the command set.

The inherited environment may be a *listing* (`EnvListing`): what a report printed of it, such as collect_env's
`ENV Variables:` block, which prints only some names. Then a name the listing would not print is not known to be
unset: asking for it (`get`, `in`, `[]`) raises FactUnavailable, so a check that would conclude "not set" from it
answers unknown instead (triage: "not in the paste").
"""

from __future__ import annotations

from typing import Iterable, Mapping, Optional

from ascend_doctor.core.errors import FactUnavailable


class EnvListing:
    """Which variables a report prints: the names with one of `prefixes` (or in `names`), less those whose lowered
    name holds one of `hidden_terms` (collect_env drops names that look secret)."""

    def __init__(self, what: str, prefixes: Iterable[str], names: Iterable[str] = (),
                 hidden_terms: Iterable[str] = (), why: str = ""):
        self.what = what
        self.why = why  # the reason for every name not shown, when one reason covers them all
        self.prefixes = tuple(prefixes)
        self.names = frozenset(names)
        self.hidden_terms = tuple(hidden_terms)

    def covers(self, prefix: str) -> bool:
        """Every variable whose name starts with `prefix` is printed (so listing them all is the whole set)."""
        return any(prefix.startswith(p) for p in self.prefixes)

    def shows(self, name: str) -> bool:
        if any(term in name.lower() for term in self.hidden_terms):
            return False
        return name in self.names or name.startswith(self.prefixes)

    def reason(self, name: str) -> str:
        from ascend_doctor.i18n import T

        if self.why:
            return self.why
        if not self.prefixes:
            return T("whether {name} is set is not shown: {what} set only {shown}", what=self.what, name=name,
                     shown=", ".join(sorted(self.names)) or "-")
        return T("{what} does not print {name} (it prints only {shown}), so whether it is set is not known",
                 what=self.what, name=name, shown=", ".join(f"{p}*" for p in self.prefixes))


class ServerEnv(dict):
    """A dict of the server's variables (read it as any environment), plus `from_command`: the names the command
    line's `env K=V` set or replaced, so a finding can say where a value came from; and `listing` when the inherited
    part is only what a report printed (see the module docstring)."""

    from_command: frozenset = frozenset()
    listing: Optional[EnvListing] = None

    @classmethod
    def of(cls, inherited: Optional[Mapping[str, str]], command: Optional[Mapping[str, str]]) -> "ServerEnv":
        env = cls(inherited or {})
        env.update(command or {})
        env.from_command = frozenset(command or ())
        env.listing = getattr(inherited, "listing", None)
        return env

    def where(self, name: str) -> str:
        """'env' or 'command line env' — the evidence label of one variable."""
        return "command line env" if name in self.from_command else "env"

    def _known(self, name) -> None:
        if (self.listing is not None and isinstance(name, str) and not dict.__contains__(self, name)
                and not self.listing.shows(name)):
            raise FactUnavailable(f"server_env.{name}", self.listing.reason(name))

    def get(self, name, default=None):
        self._known(name)
        return dict.get(self, name, default)

    def __contains__(self, name) -> bool:
        self._known(name)
        return dict.__contains__(self, name)

    def __getitem__(self, name):
        self._known(name)
        return dict.__getitem__(self, name)

    def complete(self, prefix: str = "") -> bool:
        """Iterating gives every variable whose name starts with `prefix` (not only those a report printed)."""
        return self.listing is None or self.listing.covers(prefix)

    def peek(self, name: str) -> Optional[str]:
        """The value, or None when unset *or not known* (for a hint that may be missing, never for a verdict)."""
        return dict.get(self, name)

    def __bool__(self) -> bool:  # a listing that printed nothing is still a listing (`env or {}` must keep it)
        return self.listing is not None or len(self) > 0


class ListedEnv(dict):
    """An inherited environment that is only what a report printed (`listing` says what it prints)."""

    def __init__(self, values: Mapping[str, str], listing: EnvListing):
        super().__init__(values)
        self.listing = listing
