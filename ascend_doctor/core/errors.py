"""Error types that cross module boundaries, and the exit codes they map to."""


class InputError(Exception):
    """A problem with what the user gave us (option, snapshot, matrix, config): exit 2, one line, no traceback."""

    exit_code = 2


class ParseError(ValueError):
    """A vendor-output parser could not understand its input. Parsers raise only this."""


class FactUnavailable(Exception):
    """A check asked for a fact that its probe could not establish; the engine turns it into `unknown`."""

    def __init__(self, fact: str, reason: str):
        super().__init__(f"{fact}: {reason}")
        self.fact = fact
        self.reason = reason


class ProbeCrashed(FactUnavailable):
    """The probe itself raised (a bug, not a fact about the machine): the check that needed it is an `error`
    finding with the probe's traceback, never an `unknown` that reads like "could not look"."""

    def __init__(self, fact: str, reason: str, traceback: str):
        super().__init__(fact, reason)
        self.traceback = traceback


class UndeclaredFact(Exception):
    """A check or probe asked for a fact it did not declare (`needs`, `reads`): a bug in that code, never a fact about
    the machine."""

    def __init__(self, code: str, fact: str, needs: tuple[str, ...]):
        super().__init__(f"{code} reads fact {fact!r} without declaring it (needs={list(needs)})")
        self.code = code
        self.fact = fact
