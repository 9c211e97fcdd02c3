"""Exceptions raised by qonnx_cc: one class per exit code of the ``qonnx-cc`` CLI, all under :class:`Error`.

The message is the one the CLI prints after ``qonnx-cc: error:``; ``exit_code`` is the code it exits with.
"""

from __future__ import annotations

from typing import Dict, Type

from . import _core


class Error(Exception):
    """Any qonnx-cc error. ``exit_code`` is the CLI's exit code for it."""

    exit_code: int = 1


class Failed(Error):
    """Invalid parameter values, the memory limit, internal errors (CLI exit 1)."""


class UsageError(Error, ValueError):
    """A caller's mistake: an unknown input or output name, a wrong option (CLI exit 2)."""


class CannotRead(Error, OSError):
    """A model or data file that cannot be read (CLI exit 3)."""


class CannotWrite(Error, OSError):
    """An output file that cannot be written (CLI exit 4)."""


class InvalidModel(Error):
    """A model that is not valid ONNX/QONNX, or inputs that do not fit it (CLI exit 5)."""


class Unsupported(Error):
    """An op, type or pattern qonnx-cc does not handle (CLI exit 6)."""


class NumericMismatch(Error):
    """A numeric check failed: ``convert(check=N)``, datatype sanitizing (CLI exit 7)."""


# Position = the library's status code (qonnx::Code); the exit codes come from the CLI's own table.
_BY_CODE = (Error, Failed, UsageError, CannotRead, CannotWrite, InvalidModel, Unsupported, NumericMismatch)
for _code, _cls in enumerate(_BY_CODE):
    _cls.exit_code = _core.exit_code(_code)


def error_class(code: int) -> Type[Error]:
    """The exception class for a library status code (called by the C++ core)."""
    return _BY_CODE[code] if 0 < code < len(_BY_CODE) else Failed


BY_EXIT_CODE: Dict[int, Type[Error]] = {cls.exit_code: cls for cls in _BY_CODE[1:]}
