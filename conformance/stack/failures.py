"""The recordings a stack failed on: kept with each finding, saved as bodies to re-run and reproduce.

Each finding of a stack check (a ``Counterexample`` of ``stack_outcome_matches`` or
``stack_byte_split_invariant``) holds a ``StackFinding``: every recording that fails that way, each
a ``FailingRecording`` with the exact bytes the stack was served, the recording's expected outcome,
what the stack returned and, for a split that changed the result, the pieces.

``save_failures`` writes them (``run --save-failures DIR``), in the layout of a recordings folder,
so ``run --stack ... --cassette-dir DIR`` re-runs exactly them and ``toolcall-conformance repro``
turns one into a standalone script:

* ``DIR/<api folder>/<name>.sse`` (``.ndjson``, ``.eventstream.bin``: the body's own framing, the
  bytes the stack was served; a Gemini JSON-array recording was served as the SSE the suite frames
  it into, and is saved as such). A recording with a server profile (converter options) is saved as
  its original file instead, which keeps them;
* ``DIR/<api folder>/<name>.expected.json``: the expectation, the shape of the bundled ones
  (``{"expected": {"format", "tool_calls": [{"index", "name", "call_id", "arguments",
  "raw_arguments", "error", "may_run", "why_not"}], "text", "reasoning", "finish_reason",
  "error"}}``) plus ``source``, ``recording``, ``target`` and ``failures`` (check, message, harm,
  what the stack returned);
* ``DIR/<api folder>/<name>.pieces.json`` for a byte-split failure: ``{"pieces": [base64...],
  "cuts": [offsets]}``, the reads that changed the result.
"""

from __future__ import annotations

import base64
import itertools
import json
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.verdict import CheckResult, HarmVerdict
from conformance.wire import Body, Outcome, WireFormatError, load_body, load_expectation
from conformance.wire.apis import FRAMING
from conformance.wire.cases import expectation_path

__all__ = [
    "BODY_SUFFIX",
    "PIECES_SUFFIX",
    "FailingRecording",
    "SavedFailure",
    "StackFinding",
    "load_saved_failure",
    "save_failures",
]

# The suffix of a saved body, by the framing of its wire API (conformance.wire.apis.FRAMING).
BODY_SUFFIX = {"sse": ".sse", "ndjson": ".ndjson", "eventstream": ".eventstream.bin"}
PIECES_SUFFIX = ".pieces.json"


@dataclass(frozen=True)
class FailingRecording:
    """One recording a stack check failed on, with everything needed to save and reproduce it."""

    name: str  # the recording as reports name it (``Case.name``: ``openai-chat/single_call.yaml``)
    source: Path
    body: Body  # the bytes the stack was served (``body.data``), its API and converter options
    expected: Outcome
    check: str
    message: str
    result: str  # what the stack returned, as the report shows it
    harm: HarmVerdict | None = None
    pieces: tuple[bytes, ...] | None = None  # the split that changed the result; None: served whole


@dataclass
class StackFinding:
    """The input of one stack finding: every recording that fails this way, in the order met."""

    recordings: list[FailingRecording] = field(default_factory=list)


@dataclass(frozen=True)
class SavedFailure:
    """A saved failing recording read back: its body, expectation, the pieces of a split (if any)."""

    body: Body
    expected: Outcome
    pieces: tuple[bytes, ...] | None
    document: Mapping[str, Any]  # the expectation file as written (source, target, failures)
    path: Path


def _stem(name: str) -> str:
    """``openai-chat/single_call.yaml`` -> ``openai-chat/single_call`` (the saved files' common stem)."""
    return str(expectation_path(Path(name))).removesuffix(".expected.json")


def _expected_json(expected: Outcome) -> dict[str, Any]:
    document = expected.to_json()
    if not expected.reasoning_recorded:
        del document["reasoning"]  # the source recorded none: leaving it out keeps it uncompared
    return document


def _cuts(pieces: Sequence[bytes]) -> list[int]:
    return list(itertools.accumulate(len(piece) for piece in pieces))[:-1]


def _write(base: Path, failing: Sequence[FailingRecording], target: Mapping[str, Any]) -> list[Path]:
    first = failing[0]
    base.parent.mkdir(parents=True, exist_ok=True)
    if first.body.converter_options:
        body_path = base.with_name(base.name + first.source.name[first.source.name.index(".") :])
        shutil.copyfile(first.source, body_path)
    else:
        body_path = base.with_name(base.name + BODY_SUFFIX[FRAMING[first.body.api]])
        body_path.write_bytes(first.body.data)
    expected_path = base.with_name(base.name + ".expected.json")
    document = {
        "source": f"saved by toolcall-conformance run --save-failures from {first.source}",
        "recording": first.name,
        "target": dict(target),
        "failures": [
            {
                "check": one.check,
                "message": one.message,
                "harm": one.harm.harm.value if one.harm else None,
                "harm_why": one.harm.why if one.harm else None,
                "result": one.result,
            }
            for one in failing
        ],
        "expected": _expected_json(first.expected),
    }
    expected_path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    written = [body_path, expected_path]
    split = next((one for one in failing if one.pieces is not None), None)
    if split is not None and split.pieces is not None:
        pieces_path = base.with_name(base.name + PIECES_SUFFIX)
        pieces = {
            "recording": split.name,
            "check": split.check,
            "cuts": _cuts(split.pieces),
            "pieces": [base64.b64encode(piece).decode("ascii") for piece in split.pieces],
        }
        pieces_path.write_text(json.dumps(pieces, indent=2) + "\n", encoding="utf-8")
        written.append(pieces_path)
    return written


def save_failures(results: Iterable[CheckResult], directory: Path, target: Mapping[str, Any]) -> list[Path]:
    """Write every failing recording of the stack ``results`` under ``directory``; the paths written, bodies first.

    A recording that failed several ways (both checks) is written once, with all its failures.
    Two recordings of the same name from different folders get ``-2``, ``-3``... suffixes.
    """
    by_source: dict[Path, list[FailingRecording]] = {}
    for result in results:
        for counterexample in result.counterexamples:
            finding = counterexample.input
            if isinstance(finding, StackFinding):
                for failing in finding.recordings:
                    by_source.setdefault(failing.source, []).append(failing)
    written: list[Path] = []
    taken: set[str] = set()
    for same_source in by_source.values():
        stem = _stem(same_source[0].name)
        number = next(n for n in itertools.count(1) if (f"{stem}-{n}" if n > 1 else stem) not in taken)
        unique = f"{stem}-{number}" if number > 1 else stem
        taken.add(unique)
        written += _write(directory / unique, same_source, target)
    return written


def load_saved_failure(path: str | Path) -> SavedFailure:
    """A body saved by ``save_failures`` (or any recording with ``<name>.expected.json`` beside it),
    with its expectation and, when ``<name>.pieces.json`` is there, the pieces of its split.

    Raises ``WireFormatError`` naming the file when something cannot be read.
    """
    path = Path(path)
    body = load_body(path)
    expected_file = expectation_path(path)
    if not expected_file.is_file():
        raise WireFormatError(
            f"{path}: no expectation beside it ({expected_file.name}); save failures with run "
            "--save-failures, or write one in the shape of the bundled recordings"
        )
    expected = load_expectation(expected_file)
    document = json.loads(expected_file.read_text(encoding="utf-8"))
    pieces_file = expected_file.with_name(expected_file.name.removesuffix(".expected.json") + PIECES_SUFFIX)
    pieces: tuple[bytes, ...] | None = None
    if pieces_file.is_file():
        try:
            saved = json.loads(pieces_file.read_text(encoding="utf-8"))
            pieces = tuple(base64.b64decode(piece, validate=True) for piece in saved["pieces"])
        except (ValueError, KeyError, TypeError) as error:
            raise WireFormatError(f"{pieces_file}: not a pieces file ({error})") from None
        if b"".join(pieces) != body.data:
            raise WireFormatError(f"{pieces_file}: its pieces do not add up to the body {path.name}")
    return SavedFailure(body, expected, pieces, document, path)
