"""What ``run --stack MODULE:FACTORY`` (and ``pytest --toolcall-stack``) accept, read into one calling convention.

The target is either

* a **stack**: ``stack(api, pieces, options) -> result``, called once per run of a recording with
  the wire API name, the response body in byte pieces and the recording's converter options
  (usually ``{}``); the result is read by ``conformance.wire.final`` (docs/stacks.md); or
* a **zero-argument factory** returning one (a class whose constructor takes no arguments and
  whose instances are callable as above, or a ``make_stack()`` function): called once, before the
  first recording, so a stack may build its clients once.

When both readings would work (``def stack(*args)``), the target is taken as a stack: the three
arguments are what it is for.

What the stack runs is declared by an attribute ``capabilities`` on the stack itself (the function,
the instance or its class), either a ``StackCapabilities`` or a mapping with the same keys
(``{"apis": ["openai-chat"], "reasoning": False}``), so a module can declare it without importing
the suite. Without one, the stack is taken to run every wire API. A stack with a ``close()``
method is closed by whoever made it from a factory once the run is over (``close_stack``).

Anything else (not callable, a factory that raises or returns something that is not a stack, an
unreadable declaration) is a ``StackFactoryError`` naming the target, raised before any recording
is read.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from conformance.stack.checks import StackCapabilities
from conformance.stack.runner import Stack

__all__ = ["StackFactoryError", "StackTarget", "as_stack", "close_stack", "declared_capabilities"]

# What a stack is called with, to tell a stack from a factory by its signature.
_PROBE: tuple[Any, ...] = ("openai-chat", [b""], {})


class StackFactoryError(TypeError):
    """The object named as a stack is neither a stack nor a zero-argument factory of one, or its
    ``capabilities`` cannot be read; the message says which and what it got."""


@dataclass(frozen=True)
class StackTarget:
    """A stack ready to run: the callable, what it declares (None: nothing), and whether the suite
    made it from a factory (then the suite closes it after the run)."""

    stack: Stack
    capabilities: StackCapabilities | None
    made: bool


def _accepts(target: Any, *args: Any) -> bool | None:
    """Whether ``target`` can be called with ``args`` (None: it has no signature to tell by)."""
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    try:
        signature.bind(*args)
    except TypeError:
        return False
    return True


def _bare_signature(target: Any) -> str:
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return "(...)"
    bare = signature.replace(
        parameters=[parameter.replace(annotation=parameter.empty) for parameter in signature.parameters.values()],
        return_annotation=signature.empty,
    )
    return str(bare)


def declared_capabilities(stack: Any, name: str = "") -> StackCapabilities | None:
    """The ``capabilities`` attribute of ``stack`` as ``StackCapabilities`` (None when it has none)."""
    declared = getattr(stack, "capabilities", None)
    if declared is None or isinstance(declared, StackCapabilities):
        return declared
    shown = name or getattr(stack, "__qualname__", type(stack).__name__)
    if not isinstance(declared, Mapping):
        raise StackFactoryError(
            f"{shown}.capabilities is a {type(declared).__name__}; declare a StackCapabilities or a mapping "
            '(e.g. {"apis": ["openai-chat"]})'
        )
    try:
        return StackCapabilities.from_declared(declared)
    except ValueError as error:
        raise StackFactoryError(f"{shown}.capabilities: {error}") from error


def as_stack(target: Any, name: str = "") -> StackTarget:
    """``target`` (a stack or a zero-argument factory of one) as a ``StackTarget``.

    Calls a factory once; raises ``StackFactoryError`` for anything that is neither, for a factory
    that raises, and for a ``capabilities`` attribute that cannot be read.
    """
    shown = name or getattr(target, "__qualname__", repr(target))
    if not callable(target):
        raise StackFactoryError(
            f"{shown} is a {type(target).__name__}, not a stack (stack(api, pieces, options)) or a factory of one"
        )
    if _accepts(target, *_PROBE) is not False:
        return StackTarget(target, declared_capabilities(target, name), made=False)
    if not _accepts(target):
        raise StackFactoryError(
            f"{shown}{_bare_signature(target)} can be called neither as stack(api, pieces, options) nor as a "
            "zero-argument factory(): give the stack function, or a class or function that takes no arguments and "
            "returns one"
        )
    try:
        stack = target()
    except Exception as error:  # the user's factory may raise anything: reported as unusable
        raise StackFactoryError(f"{shown}() raised {type(error).__name__}: {error}") from error
    if not callable(stack) or _accepts(stack, *_PROBE) is False:
        what = (
            f"a {type(stack).__name__}"
            if not callable(stack)
            else f"{getattr(stack, '__qualname__', type(stack).__name__)}{_bare_signature(stack)}"
        )
        raise StackFactoryError(f"{shown}() returned {what}, which cannot be called as stack(api, pieces, options)")
    return StackTarget(stack, declared_capabilities(stack, f"{shown}()"), made=True)


def close_stack(target: StackTarget) -> None:
    """Close a stack the suite made from a factory, when it has a ``close()`` method (its HTTP clients);
    ``StackFactoryError`` when closing raises."""
    close = getattr(target.stack, "close", None) if target.made else None
    if callable(close):
        try:
            close()
        except Exception as error:  # the user's close() may raise anything: reported
            raise StackFactoryError(f"closing the stack raised {type(error).__name__}: {error}") from error
