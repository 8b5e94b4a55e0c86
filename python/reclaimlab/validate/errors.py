"""The one error the harness raises for anything the user can fix (a missing package, a
failed boot, kept results that no longer match their scenario)."""

from __future__ import annotations


class ValidateError(Exception):
    """A one-line message naming what went wrong and how to fix it; the CLI exits with
    ``exit_code`` (2: input or environment, 1: the guest itself failed)."""

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(message)
        self.exit_code = exit_code


class SetUpStall(ValidateError):
    """The guest's kernel locked up before the workload began: the boot measured nothing
    (docs/VALIDATION.md, "Protocol": such a boot is retried as the same repetition)."""

    def __init__(self, message: str):
        super().__init__(message, exit_code=1)
