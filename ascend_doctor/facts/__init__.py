"""The fact store: every fact a run needs, computed once, concurrently, each probe bounded in time.

Two kinds of store, one class. A *probing* store has a host: a fact is computed on first request by its probe
(`ascend_doctor.probes`), in its own daemon thread. A *given* store (`FactStore.given`) has no host and no probes:
every fact is a value handed in (a paste's versions in triage, a node's summary in fleet, the smoke stage's results,
a test's hand-made facts), or is declared missing with the reason; asking for any other fact says no probe provides
it — except derived facts (`probe(derived=True)`: the stack), which it computes from the given ones. Checks cannot
tell the two apart, which is what lets one evaluator serve every command.
"""

from __future__ import annotations

import threading
import time
import traceback
from concurrent.futures import Future
from typing import Any, Callable, Iterable, Mapping, Optional

from ascend_doctor.core.errors import FactUnavailable, ProbeCrashed, UndeclaredFact
from ascend_doctor.core.options import RunOptions
from ascend_doctor.facts.partial import Shown
from ascend_doctor.i18n import T
from ascend_doctor.knowledge.door import Knowledge
from ascend_doctor.seam.host import Host


class FactStore:
    """Computes facts on first request, each probe in its own daemon thread, memoised, bounded by a timeout.

    Daemon threads (not a pool) so that a probe stuck in pure Python can never keep the process alive; every host
    call carries its own timeout anyway.
    """

    def __init__(self, host: Optional[Host], options: RunOptions, probes: Optional[dict[str, Callable]] = None,
                 preset: Optional[Mapping[str, Any]] = None, knowledge: Optional[Knowledge] = None):
        self.host = host
        self.options = options
        # What the run knows (every table, the user's --matrix layers over it): the checks' `ctx.knowledge` and the
        # probes' `store.knowledge` are this one object.
        self.knowledge = knowledge or Knowledge.for_options(options)
        if probes is None:
            from ascend_doctor.probes import load_probes

            probes = load_probes() if host is not None else {}
        self.probes = probes
        self._futures: dict[str, Future] = {}
        self._started: dict[str, float] = {}
        self._lock = threading.Lock()
        self.durations: dict[str, float] = {}
        self.partial: dict[str, Shown] = {}  # facts whose source shows only some parts (FactStore.given)
        self._views: dict[str, tuple] = {}  # fact -> (its value, the one view of it every reader gets)
        for name, value in (preset or {}).items():
            self.preset(name, value)

    @classmethod
    def given(cls, values: Mapping[str, Any], missing: Optional[Mapping[str, str]] = None,
              options: Optional[RunOptions] = None, knowledge: Optional[Knowledge] = None,
              partial: Optional[Mapping[str, "Shown"]] = None) -> "FactStore":
        """A store with no host and no probes: `values` are the facts, `missing` maps facts to why they are not
        there (each then reads as `unknown` with that reason), `partial` says which parts of a fact its source
        shows (ascend_doctor.facts.partial: reading another part is unknown, never an empty value)."""
        from ascend_doctor.probes import derived_probes

        store = cls(None, options or RunOptions(), probes=derived_probes(), preset=values, knowledge=knowledge)
        store.partial = dict(partial or {})
        for name, reason in (missing or {}).items():
            store.preset_missing(name, reason)
        return store

    def preset(self, name: str, value: Any) -> None:
        """Give a fact its value instead of a probe, unless one is already running."""
        self._settle(name, lambda f: f.set_result(value))

    def preset_missing(self, name: str, reason: str) -> None:
        """Mark a fact unavailable for `reason` without running its probe (triage: the paste does not have it)."""
        self._settle(name, lambda f: f.set_exception(FactUnavailable(name, reason)))

    def _settle(self, name: str, settle: Callable[[Future], None]) -> None:
        with self._lock:
            if name not in self._futures:
                f: Future = Future()
                settle(f)
                self._futures[name] = f
                self._started[name] = time.monotonic()

    def start(self, name: str) -> Future:
        with self._lock:
            fut = self._futures.get(name)
            if fut is not None:
                return fut
            fut = Future()
            self._futures[name] = fut
            self._started[name] = time.monotonic()
        func = self.probes.get(name)
        if func is None:
            fut.set_exception(FactUnavailable(name, T("no probe provides fact {name}", name=repr(name))))
            return fut

        def work() -> None:
            t0 = time.monotonic()
            try:
                fut.set_result(func(self.host, ProbeView(self, name, getattr(func, "reads", ()))))
            except FactUnavailable as exc:
                fut.set_exception(exc)
            except Exception as exc:  # a probe bug: every check that needs the fact is an error, the run goes on
                fut.set_exception(ProbeCrashed(name, f"the {name} probe crashed: {type(exc).__name__}: {exc}",
                                               traceback.format_exc()))
            finally:
                self.durations[name] = round(time.monotonic() - t0, 4)

        threading.Thread(target=work, name=f"probe-{name}", daemon=True).start()
        return fut

    def start_all(self, names: Iterable[str]) -> None:
        for n in names:
            self.start(n)

    def timeout_for(self, name: str) -> float:
        """This probe's time budget: --probe-timeout, or the probe's own minimum when that is larger."""
        minimum = getattr(self.probes.get(name), "min_timeout", 0.0) or 0.0
        if callable(minimum):  # a minimum that follows an option (--import-timeout) or a table (the compute smoke)
            minimum = minimum(self)
        return max(self.options.probe_timeout, minimum)

    def fact(self, name: str) -> Any:
        """The fact's value; raises FactUnavailable when its probe failed or ran out of time."""
        fut = self.start(name)
        budget = self.timeout_for(name)
        remaining = budget - (time.monotonic() - self._started[name])
        try:
            value = fut.result(timeout=max(remaining, 0.0))
            shown = self.partial.get(name)
            if shown is None:
                return value
            view = self._views.get(name)
            if view is None or view[0] is not value:
                view = self._views[name] = (value, shown.view(name, value))
            return view[1]
        except FactUnavailable:
            raise
        except Exception as exc:  # TimeoutError (3.11+) / concurrent.futures.TimeoutError (3.9, 3.10)
            if isinstance(exc, TimeoutError) or type(exc).__name__ == "TimeoutError":
                raise FactUnavailable(name,
                                      T("probe did not finish within {budget}s", budget=format(budget, "g"))) from None
            raise

    def try_fact(self, name: str) -> Any:
        """The fact, or None when unavailable. A crashed probe still raises (ProbeCrashed): a check must not
        conclude anything from a fact that is missing because of a bug."""
        return _or_none(self.fact, name)


def _or_none(read: Callable[[str], Any], name: str) -> Any:
    """`read(name)`, or None when the fact is unavailable; a crashed probe still raises."""
    try:
        return read(name)
    except ProbeCrashed:
        raise
    except FactUnavailable:
        return None


class DeclaredReads:
    """Reads facts from a store, refusing any name outside the declared ones (`reads` None: any) with
    UndeclaredFact naming the reader: what a check's context and a probe's view of the store have in common."""

    def __init__(self, store: FactStore, reader: str, reads: Optional[Iterable[str]]):
        self._store = store
        self._reader = reader
        self._reads = tuple(reads) if reads is not None else None
        # Facts asked for and not available (name -> reason), even those a check took as None from try_fact:
        # what triage reads to tell "not in the paste" from a check's own unknown.
        self.unread: dict[str, str] = {}

    def _allowed(self, name: str) -> None:
        if self._reads is not None and name not in self._reads:
            raise UndeclaredFact(self._reader, name, self._reads)

    def fact(self, name: str) -> Any:
        self._allowed(name)
        try:
            return self._store.fact(name)
        except ProbeCrashed:
            raise
        except FactUnavailable as exc:
            self.unread[exc.fact] = exc.reason
            raise

    def try_fact(self, name: str) -> Any:
        """The fact, or None when unavailable (recorded in `unread`); a crashed probe still raises."""
        return _or_none(self.fact, name)


class ProbeView(DeclaredReads):
    """The store as one probe sees it: the facts it declared in `reads` (another read raises UndeclaredFact, which the
    store reports as that probe's crash), the run's options, knowledge and host."""

    def __init__(self, store: FactStore, name: str, reads: Iterable[str]):
        super().__init__(store, f"probe {name}", reads)
        self.options = store.options
        self.knowledge = store.knowledge
        self.host = store.host
