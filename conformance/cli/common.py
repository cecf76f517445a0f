"""What every subcommand shares: exit codes, the usage error, and importing the user's target.

Exit codes (documented in the README):
  0  conformant (every applicable check passed)
  1  the target violates at least one check
  2  the suite could not run (bad arguments, unimportable or unusable target, unreadable file)
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "EXIT_CONFORMANT",
    "EXIT_INTERRUPTED",
    "EXIT_USAGE",
    "EXIT_VIOLATIONS",
    "UsageError",
    "import_attribute",
    "load_factory",
    "load_formatter",
    "refuse_blank_targets",
    "writable_dir",
    "writable_file",
]

EXIT_CONFORMANT = 0
EXIT_VIOLATIONS = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # the shell's code for a run ended by Ctrl-C


class UsageError(Exception):
    """A command-line problem the user can fix; printed without a traceback, exit code 2."""


def refuse_blank_targets(args: Any, fields: tuple[str, ...]) -> None:
    """A target option given an empty or blank value is a usage error, never "no target".

    Without this, ``run --handler "$HANDLER"`` with the variable unset would check the bundled
    reference and pass: a CI gate that can never fail.
    """
    for field in fields:
        value = getattr(args, field, None)
        if value is not None and not value.strip():
            option = "--" + field.replace("_", "-")
            raise UsageError(f"{option} is empty ({value!r}); name the target to check (an unset variable?)")


def import_attribute(spec: str, option: str, example: str, shape: str) -> Any:
    """Import ``MODULE:ATTRIBUTE`` (dotted attributes allowed) and return the object it names."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise UsageError(f"{option} must look like {shape} (e.g. {example}), got {spec!r}")
    # Like `python -m`, uvicorn or gunicorn: a module in the working directory is importable even
    # when the console script's own sys.path does not include it.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise UsageError(f"cannot import module {module_name!r} from {option} {spec!r}: {error}") from error
    except Exception as error:
        raise UsageError(
            f"importing module {module_name!r} from {option} {spec!r} raised {type(error).__name__}: {error}"
        ) from error
    target: Any = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError as error:
            raise UsageError(
                f"module {module_name!r} has no attribute {attribute!r} (from {option} {spec!r})"
            ) from error
    return target


def load_factory(spec: str, option: str = "--handler") -> Callable[..., Any]:
    """Import ``MODULE:ATTRIBUTE`` and return the callable it names (``option`` names the flag in errors)."""
    example = "mypkg.handlers:make_handler" if option == "--handler" else "mypkg.providers:make_converter"
    target = import_attribute(spec, option, example, "MODULE:FACTORY")
    if not callable(target):
        raise UsageError(f"{spec!r} names a {type(target).__name__}, not a callable factory (from {option})")
    return target  # type: ignore[no-any-return]


def load_formatter(spec: str, option: str = "--formatter") -> Any:
    """Import ``MODULE:ATTRIBUTE`` naming a round-trip formatter and return it as a ``FormatterAdapter``.

    The attribute may be a formatter object, a class or zero-argument factory returning one, or a
    bare ``format_followup(target, turn, results)`` function (see ``conformance.roundtrip``). Anything
    unusable (not a formatter, a factory that raises, unknown declared targets) is a ``UsageError``.
    """
    from conformance.roundtrip import as_formatter

    target = import_attribute(spec, option, "mypkg.followup:MyFormatter", "MODULE:ATTR")
    if not callable(target) and not hasattr(target, "format_followup"):
        raise UsageError(
            f"{spec!r} names a {type(target).__name__}, not a round-trip formatter (no format_followup method), "
            f"class or factory (from {option})"
        )
    try:
        return as_formatter(target, spec)
    except Exception as error:  # the user's factory or constructor may raise anything
        raise UsageError(
            f"{option} {spec!r} is not a usable round-trip formatter: {type(error).__name__}: {error}"
        ) from error


def writable_file(path: Path | None, option: str) -> None:
    """Refuse, before the run, a report path that cannot be written; a missing folder is created at
    write time (as ``pytest --junitxml`` does), so only its nearest existing ancestor is checked."""
    if path is None:
        return
    if path.is_dir():
        raise UsageError(f"{option} {path}: is a directory; give a file path")
    creatable_dir(path.parent if str(path.parent) else Path(), option, path)
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"{option} {path}: not writable")


def writable_dir(path: Path | None, option: str) -> None:
    """Refuse, before anything runs, an output folder that is a file or cannot be created."""
    if path is None:
        return
    if path.exists() and not path.is_dir():
        raise UsageError(f"{option} {path}: exists and is not a directory")
    creatable_dir(path, option, path)


def creatable_dir(folder: Path, option: str, path: Path) -> None:
    """``folder`` exists as a writable directory, or can be created: its nearest existing ancestor is one."""
    existing = next((p for p in (folder, *folder.parents) if p.exists()), Path())
    if not existing.is_dir():
        raise UsageError(f"{option} {path}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK):
        raise UsageError(f"{option} {path}: {existing} is not writable")
