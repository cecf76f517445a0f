"""Read-only containers for event payloads and invocation arguments.

Events and invocations are shared between the handler, its callbacks and every consumer of
``get_all_events()``; a consumer that mutates a payload would corrupt what everyone else sees.
``FrozenDict``/``FrozenList`` subclass ``dict``/``list`` so that equality with plain values,
``json.dumps`` and ``isinstance(x, dict)`` keep working, while every mutating method raises.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NoReturn

_MESSAGE = "{} is read-only: events and invocations are immutable once emitted (copy it with {}(...))"


class FrozenDict(dict[str, Any]):
    """A ``dict`` whose mutating methods raise ``TypeError``."""

    __slots__ = ()

    def _refuse(self, *_args: Any, **_kwargs: Any) -> NoReturn:
        raise TypeError(_MESSAGE.format("this mapping", "dict"))

    __setitem__ = _refuse
    __delitem__ = _refuse
    __ior__ = _refuse
    clear = _refuse
    pop = _refuse
    popitem = _refuse
    setdefault = _refuse
    update = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickling / deepcopy rebuild through the constructor, never through __setitem__.
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, _memo: dict[int, Any]) -> FrozenDict:
        return self


class FrozenList(list[Any]):
    """A ``list`` whose mutating methods raise ``TypeError``."""

    __slots__ = ()

    def _refuse(self, *_args: Any, **_kwargs: Any) -> NoReturn:
        raise TypeError(_MESSAGE.format("this list", "list"))

    __setitem__ = _refuse
    __delitem__ = _refuse
    __iadd__ = _refuse
    __imul__ = _refuse
    append = _refuse
    clear = _refuse
    extend = _refuse
    insert = _refuse
    pop = _refuse
    remove = _refuse
    reverse = _refuse
    sort = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (list(self),))

    def __copy__(self) -> FrozenList:
        return self

    def __deepcopy__(self, _memo: dict[int, Any]) -> FrozenList:
        return self


_FROZEN_TYPES = (FrozenDict, FrozenList)


def freeze(value: Any) -> Any:
    """Return ``value`` with every nested dict/list replaced by its read-only twin.

    Iterative rather than recursive: tool arguments may be nested thousands of levels deep
    (the JSON decoder accepts that), and a recursive walk would hit the interpreter's limit.
    """
    if not isinstance(value, (dict, list)) or isinstance(value, _FROZEN_TYPES):
        return value
    # Post-order construction: children must be frozen before their parent is built.
    root_holder: list[Any] = [None]
    # (node to freeze, container that will hold it, key or position inside that container)
    stack: list[tuple[Any, Any, Any]] = [(value, root_holder, 0)]
    pending: list[tuple[Any, Any, Any, Any]] = []
    while stack:
        node, parent, key = stack.pop()
        # Only unfrozen dicts and lists are ever pushed.
        copy: Any
        frozen_type: type[FrozenDict | FrozenList]
        children: Iterable[tuple[Any, Any]]
        if isinstance(node, dict):
            copy, frozen_type, children = dict(node), FrozenDict, node.items()
        else:
            copy, frozen_type, children = list(node), FrozenList, enumerate(node)
        pending.append((copy, parent, key, frozen_type))
        for child_key, child in children:
            if isinstance(child, (dict, list)) and not isinstance(child, _FROZEN_TYPES):
                stack.append((child, copy, child_key))
    # Build from the deepest containers up: ``pending`` is in pre-order, so reverse it.
    for container, parent, key, frozen_type in reversed(pending):
        parent[key] = frozen_type(container)
    return root_holder[0]


def thaw(value: Any) -> Any:
    """Return a deep, mutable copy of a (possibly frozen) JSON-like value.

    Iterative for the same reason as ``freeze``: arguments the decoder accepted may be nested
    deeper than the interpreter's recursion limit.
    """
    if not isinstance(value, (dict, list)):
        return value
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        node, parent, key = stack.pop()
        if isinstance(node, dict):
            copy: Any = {}
            for child_key, child in node.items():
                copy[child_key] = child
                if isinstance(child, (dict, list)):
                    stack.append((child, copy, child_key))
        elif isinstance(node, list):
            copy = list(node)
            for position, child in enumerate(node):
                if isinstance(child, (dict, list)):
                    stack.append((child, copy, position))
        else:  # pragma: no cover - only containers are pushed
            copy = node
        parent[key] = copy
    return root[0]
