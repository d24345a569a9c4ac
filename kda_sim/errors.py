"""The error types every layer raises; the CLI maps them to exit codes."""

from __future__ import annotations


class KdaSimError(Exception):
    """Base of the errors we raise on purpose (never a bare traceback for the user)."""


class InvalidInput(KdaSimError):
    """A configuration, file or flag the user gave is impossible (exit 2).

    ``what`` names the constraint or field, ``where`` the flag, file or record.
    """

    def __init__(self, message: str, *, what: str = "", where: str = "") -> None:
        self.what = what
        self.where = where
        prefix = f"{where}: " if where else ""
        super().__init__(prefix + message)


class TraceFormatError(InvalidInput):
    """A trace file that is not what it claims to be."""
