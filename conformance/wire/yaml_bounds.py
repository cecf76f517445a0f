"""Reading YAML that may come from someone else (cassettes), within bounds.

A safe loader builds an alias as a shared reference, so a "billion laughs" document loads in
microseconds; whatever walks it afterwards (a secret scan, a JSON dump) then visits every
expansion and runs until killed. ``load_yaml`` refuses, before anything walks the document, one
whose aliases would expand it past ``MAX_EXPANDED_NODES`` nodes, one whose alias refers to itself
(a loop), and text larger than ``MAX_YAML_BYTES``. Every YAML reader of the suite goes through it.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["MAX_EXPANDED_NODES", "MAX_YAML_BYTES", "YamlBoundExceeded", "load_yaml"]

# The largest cassette the suite reads (a recorded stream with its headers is a few MB; the
# largest replay benchmarked is 63 MB).
MAX_YAML_BYTES = 256 * 1024 * 1024
# Nodes the document may have once every alias is expanded: far above any real cassette (one node
# per key, value and list item; a 63 MB body is one scalar), far below what exhausts memory.
MAX_EXPANDED_NODES = 2_000_000

# libyaml's safe loader when PyYAML was built with it: the same documents, several times faster.
_SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlBoundExceeded(yaml.YAMLError):
    """The document is beyond a bound; ``line`` (1-based) is where the offending part starts."""

    def __init__(self, message: str, line: int = 1) -> None:
        super().__init__(message)
        self.line = line


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, refusing what a walk over it could not survive (``YamlBoundExceeded``)."""
    if len(text) > MAX_YAML_BYTES:
        raise YamlBoundExceeded(f"the document is {len(text):,} characters, more than the {MAX_YAML_BYTES:,} read")
    loader = _SAFE_LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _line(node: yaml.Node) -> int:
    mark = getattr(node, "start_mark", None)
    return int(mark.line) + 1 if mark is not None else 1


def _check_expansion(root: yaml.Node) -> None:
    """The size of ``root`` with every alias expanded, counted once per shared node (linear time)."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    pending: list[tuple[yaml.Node, bool]] = [(root, False)]
    while pending:
        node, children_done = pending.pop()
        key = id(node)
        if key in sizes:
            continue
        children = _children(node)
        if children_done:
            open_nodes.discard(key)
            size = 1 + sum(sizes[id(child)] for child in children)
            if size > MAX_EXPANDED_NODES:
                raise YamlBoundExceeded(
                    f"its aliases expand the part starting here to more than {MAX_EXPANDED_NODES:,} nodes "
                    "(an alias bomb?); a cassette needs no aliases",
                    _line(node),
                )
            sizes[key] = size
            continue
        open_nodes.add(key)
        pending.append((node, True))
        for child in children:
            if id(child) in open_nodes:
                raise YamlBoundExceeded("an alias here refers to a node that contains it (a loop)", _line(child))
            if id(child) not in sizes:
                pending.append((child, False))
