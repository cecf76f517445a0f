"""The two shapes a converter factory may have, and one calling convention for the suite.

The suite makes a fresh converter per recording by calling ``factory(api, **converter_options)``
(``converter_options`` are what a cassette declares for its server, usually none). A converter
written for one wire API is often just a class with no constructor arguments; asking its author to
wrap it would only invite ``TypeError`` at the first recording, reported as a converter bug. So a
zero-argument factory is accepted too and called as ``factory(**converter_options)``. Anything
that can be called neither way is refused before the run starts, saying which signature it has.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any, Protocol

__all__ = ["Converter", "ConverterFactoryError", "as_converter_factory"]


class Converter(Protocol):
    """What the suite calls on a converter: one SDK event in, the chunks it gives out.

    Chunks are read by attribute as ``ChunkResponse`` describes them (``content``, ``reasoning``,
    ``tool_calls``, ``is_complete``, ``finish_reason``, ``error``, ``usage``); any class with those
    attributes will do. Optional: ``fail(exc)`` (the chunks for an in-band SDK error) and
    ``api_errors`` (the SDK exception classes that mean one).
    """

    def convert(self, event: Any) -> Iterable[Any]: ...

    def finish(self) -> Iterable[Any]: ...


class ConverterFactoryError(TypeError):
    """The object given as a converter factory can be called neither as ``factory(api)`` nor ``factory()``."""


def _accepts(signature: inspect.Signature, *args: Any) -> bool:
    try:
        signature.bind(*args)
    except TypeError:
        return False
    return True


def as_converter_factory(target: Callable[..., Converter], name: str = "") -> Callable[..., Converter]:
    """``target`` as a factory the suite calls as ``factory(api, **converter_options)``.

    ``target`` may take the wire API name first (``make_converter(api, **options)``), or nothing
    (``MyConverter`` whose constructor takes no arguments: it converts one wire API, named with
    ``--format``). Raises ``ConverterFactoryError`` for anything else.
    """
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return target  # a builtin or C callable without a signature: called as documented
    if _accepts(signature, "openai-chat"):
        return target
    if _accepts(signature):

        def without_api(api: str, **converter_options: Any) -> Converter:
            del api  # a zero-argument factory converts the one wire API it was written for
            return target(**converter_options)

        without_api.__qualname__ = without_api.__name__ = getattr(target, "__qualname__", repr(target))
        return without_api
    shown = name or getattr(target, "__qualname__", repr(target))
    bare = signature.replace(
        parameters=[parameter.replace(annotation=parameter.empty) for parameter in signature.parameters.values()],
        return_annotation=signature.empty,
    )
    raise ConverterFactoryError(
        f"{shown}{bare} can be called neither as factory(api, **converter_options) nor as factory(): "
        "give a callable taking the wire API name, or a converter class whose constructor takes no arguments"
    )
