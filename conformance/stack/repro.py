"""Standalone reproduction scripts for a saved failing recording (``toolcall-conformance repro``).

``reproduction_script(saved, client=..., call=...)`` writes a Python script that imports only the
library under test and its SDK (never ``conformance`` or ``reference_impl``): it embeds the saved
body (and the reads of a byte-split failure), serves it through the SDK's own HTTP client with a
``MockTransport`` (offline), calls the library, prints what it returned and what the stream says,
and exits 1 while the defect is there, 0 once it is fixed (2 when it cannot run at all).

What the stream says is computed here, once, from the saved expectation (``conformance.wire``:
each call's ``may_run`` and ``why_not``, and whether the turn ended abnormally); the script only
compares, by the rules of ``conformance.wire.replay.compare_outcomes`` in small:

* the calls the library would run (the ones it hands arguments) are exactly the calls that may
  run, in order, with the provider's ids and equal arguments;
* it reports as many calls as the stream holds (one that must not run is reported with an error,
  never dropped silently);
* its text (and reasoning, when it reports any and the recording has it) is the stream's;
* a stream that ended in an error or was cut is surfaced (an ``error`` in the result, or an
  exception); an exception on a stream that ended normally is a crash.

The library under test is the SDK's own stream helper by default
(``client.chat.completions.stream(...).get_final_completion()``,
``client.responses.stream(...).get_final_response()``, ``client.messages.stream(...).get_final_message()``;
a call runs when its arguments are one JSON object, as a caller of the helper would decide), or
``call="MODULE:FUNCTION"``, a function ``f(client) -> result`` whose result is read the way
``conformance.wire.final`` reads a stack's (docs/stacks.md).
"""

from __future__ import annotations

import json
import math
import pprint
import re
import textwrap
from typing import Any

from conformance.stack.failures import SavedFailure, _cuts
from conformance.wire.may_run import stream_why_not

__all__ = ["CLIENTS", "ReproError", "reproduction_script"]

# The SDK a --client names, and the wire APIs whose bodies it reads.
CLIENTS: dict[str, tuple[str, ...]] = {"openai": ("openai-chat", "openai-responses"), "anthropic": ("anthropic",)}


class ReproError(ValueError):
    """The saved failure cannot be reproduced this way (another SDK's body, a malformed ``--call``)."""


_HELPERS = {
    "openai-chat": '''def library_under_test(client):
    """The SDK's own stream helper: client.chat.completions.stream(...).get_final_completion()."""
    with client.chat.completions.stream(model="gpt-4.1-mini", messages=MESSAGES) as stream:
        completion = stream.get_final_completion()
    if not completion.choices:
        return {"calls": [], "text": ""}
    message = completion.choices[0].message
    calls = []
    for call in message.tool_calls or []:
        raw = call.function.arguments or ""
        calls.append({"call_id": call.id, "name": call.function.name, "raw_arguments": raw,
                      "arguments": parse_arguments(raw)})
    return {"calls": calls, "text": message.content or "", "finish_reason": completion.choices[0].finish_reason}


HELPER = "client.chat.completions.stream(...).get_final_completion()"
''',
    "openai-responses": '''def library_under_test(client):
    """The SDK's own stream helper: client.responses.stream(...).get_final_response()."""
    with client.responses.stream(model="gpt-4.1-mini", input=MESSAGES) as stream:
        response = stream.get_final_response()
    calls, text = [], []
    for item in response.output or []:
        if item.type == "function_call":
            calls.append({"call_id": item.call_id, "name": item.name, "raw_arguments": item.arguments or "",
                          "arguments": parse_arguments(item.arguments or "")})
        elif item.type == "message":
            text += [part.text for part in item.content or [] if getattr(part, "type", "") == "output_text"]
    return {"calls": calls, "text": "".join(text), "finish_reason": response.status}


HELPER = "client.responses.stream(...).get_final_response()"
''',
    "anthropic": '''def library_under_test(client):
    """The SDK's own stream helper: client.messages.stream(...).get_final_message()."""
    with client.messages.stream(model="claude-sonnet-5", max_tokens=1024, messages=MESSAGES) as stream:
        message = stream.get_final_message()
    calls, text, thinking = [], [], []
    for block in message.content:
        if block.type == "tool_use":
            calls.append({"call_id": block.id, "name": block.name, "raw_arguments": json.dumps(block.input),
                          "arguments": block.input if isinstance(block.input, dict) else None})
        elif block.type == "text":
            text.append(block.text)
        elif block.type == "thinking":
            thinking.append(block.thinking)
    return {"calls": calls, "text": "".join(text), "reasoning": "".join(thinking),
            "finish_reason": message.stop_reason}


HELPER = "client.messages.stream(...).get_final_message()"
''',
}

_CALL = '''def library_under_test(client):
    """The library under test: __CALL__(client)."""
    # Run from where `import __MODULE__` works (the project of the library under test).
    sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module("__MODULE__")
    except ImportError as error:
        print(f"cannot import __MODULE__ (run this script from the project that has it): {error}")
        sys.exit(2)
    return getattr(module, "__FUNCTION__")(client)


HELPER = "__CALL__(client)"
'''

_PLACEHOLDER = re.compile(r"__[A-Z_]+__")

_CLIENTS = {
    "openai": 'openai.OpenAI(api_key="offline", max_retries=0, http_client=http.Client(transport=transport))',
    "anthropic": 'anthropic.Anthropic(api_key="offline", max_retries=0, http_client=http.Client(transport=transport))',
}

_TEMPLATE = '''#!/usr/bin/env python3
"""A standalone reproduction: __WHAT__, with __SDK__ alone, offline.

__GENERATED__

It serves the recorded response body (__SERVED__) to the SDK's own HTTP client through a
MockTransport, so nothing leaves this machine; calls the library under test, __HELPER_DOC__;
prints what it returned and what the stream says; and compares them: the calls it would run (the
ones it hands arguments) must be exactly the calls that may run, with the provider's ids and equal
arguments; every call of the stream is reported; the text is the stream's; a stream that ended in
an error or was cut must be surfaced, and one that ended normally must not raise.

Needs only the SDK (pip install __SDK__==__SDK_VERSION__, or the version you use)__NEEDS__.
Exit status: 1 while the defect is there, 0 once it is fixed, 2 when it cannot run.
"""

import importlib
import json
import os
import sys

try:
    import __SDK__
except ImportError as missing:  # exit 2, not a traceback's 1 (which would read as "the defect is there")
    print(f"cannot run: {missing} (pip install __SDK__==__SDK_VERSION__)")
    sys.exit(2)

# The response body, exactly as the stack under test was served it.
BODY = (
__BODY__
)
# Where the body is cut into network reads (empty: served whole).
CUTS = __CUTS__
MESSAGES = [{"role": "user", "content": "What's the weather in Paris?"}]

# What the stream says, read from the recording: the calls, whether each may run (and why not),
# the text, and how the turn ended ("ended": None when normally, else why nothing of it may run).
STREAM = __STREAM__


def pieces():
    bounds = [0, *CUTS, len(BODY)]
    return [BODY[start:end] for start, end in zip(bounds, bounds[1:])]


def http_library():
    """The HTTP library the SDK's client is built on: httpx2 (openai 3.x) or httpx (openai 2.x)."""
    base = __SDK__.DefaultHttpxClient.__mro__[1]
    return importlib.import_module(base.__module__.split(".")[0])


def offline_client():
    http = http_library()

    def respond(request):
        return http.Response(200, headers={"content-type": "text/event-stream"}, content=iter(pieces()))

    transport = http.MockTransport(respond)
    return __CLIENT__


def parse_arguments(raw):
    """Strict: "" is {}; anything but one JSON object is None (a caller must not run the call)."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


__LIBRARY__

def field(value, *names):
    for name in names:
        if isinstance(value, dict) and name in value:
            return value[name]
        if not isinstance(value, dict) and hasattr(value, name):
            return getattr(value, name)
    return None


def read_call(call):
    """(call_id, name, arguments or None): a mapping, an object or a (call_id, name, raw, arguments_or_error) tuple."""
    if isinstance(call, tuple):
        call_id, name, _, outcome = call
        return call_id or None, name, dict(outcome) if isinstance(outcome, dict) else None
    arguments = field(call, "arguments", "args")
    if field(call, "error") or not isinstance(arguments, dict):
        arguments = None
    return field(call, "call_id", "id") or None, field(call, "name", "tool_name"), arguments


def read_result(result):
    """The library's answer as calls, text, reasoning and error (text or reasoning None: not reported)."""
    if isinstance(result, (list, tuple)):
        return [read_call(call) for call in result], None, None, None
    calls = field(result, "tool_calls", "calls") or []
    text, reasoning = field(result, "text", "content"), field(result, "reasoning")
    return (
        [read_call(call) for call in calls],
        text if isinstance(text, str) else None,
        reasoning if isinstance(reasoning, str) else None,
        field(result, "error"),
    )


def shown(call_id, name, arguments):
    args = "no arguments (not run)" if arguments is None else json.dumps(arguments, ensure_ascii=False)
    return f"{name} id={call_id!r} {args}"


def defects(raised, calls, text, reasoning, error):
    """Where the library departs from the stream (empty: it does not)."""
    ended = STREAM["ended"]
    if raised is not None:
        return [] if ended else [f"it raised {raised} on a stream that ended normally: nothing ran"]
    found = []
    if ended in ("incomplete", "provider_error") and not error:
        found.append(f"the stream ended abnormally ({STREAM['error'] or ended}) but nothing surfaced it")
    if len(calls) != len(STREAM["calls"]):
        found.append(f"the stream holds {len(STREAM['calls'])} calls, the library reported {len(calls)}")
    runs = [(call_id, name, arguments) for call_id, name, arguments in calls if arguments is not None]
    may_run = [(c["call_id"], c["name"], c["arguments"]) for c in STREAM["calls"] if c["may_run"]]
    for position in range(max(len(runs), len(may_run))):
        got = runs[position] if position < len(runs) else None
        want = may_run[position] if position < len(may_run) else None
        if want is None:
            why = next((c["why_not"] for c in STREAM["calls"] if c["name"] == got[1]), None)
            found.append(f"it runs {shown(*got)}, which may not run ({why or 'it is not in the stream'})")
        elif got is None:
            found.append(f"it never runs {shown(*want)}, which may run")
        elif got[1] != want[1] or (want[0] and got[0] != want[0]) or got[2] != want[2]:
            found.append(f"it runs {shown(*got)} where the stream says {shown(*want)}")
    if text is not None and text != STREAM["text"]:
        found.append(f"its text is {text!r}, the stream's is {STREAM['text']!r}")
    if reasoning is not None and STREAM["reasoning"] is not None and reasoning != STREAM["reasoning"]:
        found.append(f"its reasoning is {reasoning[:60]!r}..., the stream's is {STREAM['reasoning'][:60]!r}...")
    return found


def main():
    print(f"library under test: {HELPER} ({__SDK__.__name__} {__SDK__.__version__})")
    print(f"body: {len(BODY)} bytes of {STREAM['api']}, served in {len(CUTS) + 1} read(s)")
    print("what the stream says:")
    for call in STREAM["calls"]:
        verdict = "may run" if call["may_run"] else f"may not run ({call['why_not']})"
        print(f"  {shown(call['call_id'], call['name'], call['arguments'])}: {verdict}")
    print(f"  text: {STREAM['text']!r}")
    print(f"  the turn: {'ended normally' if STREAM['ended'] is None else 'ended abnormally: ' + STREAM['ended']}")
    raised, calls, text, reasoning, error = None, [], None, None, None
    try:
        with offline_client() as client:
            calls, text, reasoning, error = read_result(library_under_test(client))
    except Exception as exception:  # the library under test may raise anything: that is its answer
        raised = f"{type(exception).__name__}: {exception}"
    print("what the library returned:")
    if raised is not None:
        print(f"  raised {raised}")
    for call_id, name, arguments in calls:
        print(f"  {shown(call_id, name, arguments)}{' -> runs' if arguments is not None else ''}")
    if raised is None:
        print(f"  text: {text!r}" + ("" if reasoning is None else f", reasoning: {reasoning[:60]!r}"))
        print(f"  error: {error!r}")
    found = defects(raised, calls, text, reasoning, error)
    for defect in found:
        print(f"DEFECT: {defect}")
    if not found:
        print("FIXED: the library runs exactly the calls that may run, and gives the stream's text")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
'''


def _literal(value: Any) -> str:
    """``value`` (JSON data) as Python source: a readable literal, or ``json.loads(...)`` when a
    number has no Python literal (NaN, infinity)."""

    def finite(item: Any) -> bool:
        if isinstance(item, float):
            return math.isfinite(item)
        if isinstance(item, dict):
            return all(finite(v) for v in item.values())
        if isinstance(item, list):
            return all(finite(v) for v in item)
        return True

    if finite(value):
        return pprint.pformat(value, width=110, sort_dicts=False)
    return f"json.loads({json.dumps(json.dumps(value))})"


def _body_literal(body: bytes) -> str:
    """The body as adjacent bytes literals, one per line of the body (readable SSE)."""
    lines = body.splitlines(keepends=True) or [b""]
    return "\n".join(f"    {line!r}" for line in lines)


def _stream(saved: SavedFailure) -> dict[str, Any]:
    expected = saved.expected
    return {
        "api": saved.body.api,
        "ended": stream_why_not(expected.api or saved.body.api, expected.finish_reason, expected.error),
        "error": expected.error,
        "finish_reason": expected.finish_reason,
        "calls": [
            {
                "name": call.name,
                "call_id": call.call_id,
                "arguments": call.arguments,
                "may_run": call.may_run,
                "why_not": call.why_not,
            }
            for call in expected.tool_calls
        ],
        "text": expected.text,
        "reasoning": expected.reasoning if expected.reasoning_recorded else None,
    }


def _finding(saved: SavedFailure) -> str:
    failures = saved.document.get("failures") if isinstance(saved.document, dict) else None
    if not isinstance(failures, list) or not failures or not isinstance(failures[0], dict):
        return "no finding recorded beside it"
    first = failures[0]
    return f"{first.get('check')}: {first.get('harm') or 'harm not classified'}: {first.get('message')}"


def reproduction_script(saved: SavedFailure, *, client: str, call: str | None = None, sdk_version: str = "") -> str:
    """The source of a standalone script that reproduces ``saved`` with the ``client`` SDK alone.

    ``client`` is ``openai`` (Chat Completions and Responses bodies) or ``anthropic``; ``call``
    (``MODULE:FUNCTION``) names the user's ``f(client) -> result`` to run instead of the SDK's own
    stream helper; ``sdk_version`` goes into the script's install hint. Raises ``ReproError`` when
    the body is not one the client reads, or ``call`` is malformed.
    """
    if client not in CLIENTS:
        raise ReproError(f"--client must be one of {', '.join(CLIENTS)}, got {client!r}")
    api = saved.body.api
    if api not in CLIENTS[client]:
        readers = ", ".join(f"--client {name} ({', '.join(apis)})" for name, apis in CLIENTS.items() if api in apis)
        raise ReproError(
            f"{saved.path}: its body is {api}; --client {client} reads {', '.join(CLIENTS[client])} bodies"
            + (f" (use {readers})" if readers else ": no client here reads it yet")
        )
    if call is not None:
        module, _, function = call.partition(":")
        if not module or not function or not all(part.isidentifier() for part in [*module.split("."), function]):
            raise ReproError(f"--call must look like MODULE:FUNCTION (e.g. mypkg.agent:ask), got {call!r}")
        library = _CALL.replace("__CALL__", call).replace("__MODULE__", module).replace("__FUNCTION__", function)
        needs, what = f", and {module} importable from where it runs", f"{call}(client) on a recorded {api} stream"
    else:
        library, needs, what = _HELPERS[api], "", f"the {client} SDK's stream helper on a recorded {api} stream"
    cuts = [] if saved.pieces is None else _cuts(saved.pieces)
    served = f"{len(saved.body.data)} bytes" + (f", in the {len(cuts) + 1} reads that fail" if cuts else ", whole")
    recording = saved.document.get("recording") if isinstance(saved.document, dict) else None
    replacements = {
        "__WHAT__": what,
        "__GENERATED__": textwrap.fill(
            f"Generated by `toolcall-conformance repro` from the saved failing recording {saved.path.name} "
            f"({f'recording {recording}' if recording else 'a recording'}; {_finding(saved)}).",
            width=100,
            break_on_hyphens=False,
        ),
        "__SERVED__": served,
        "__HELPER_DOC__": call + "(client)" if call else "the SDK's own stream helper",
        "__SDK_VERSION__": sdk_version or "<version>",
        "__NEEDS__": needs,
        "__BODY__": _body_literal(saved.body.data),
        "__CUTS__": repr(cuts),
        "__STREAM__": _literal(_stream(saved)),
        "__LIBRARY__": library,
        "__CLIENT__": _CLIENTS[client],
        "__SDK__": client,
    }
    # One pass: what is put in (the body, the recorded text) is never scanned for placeholders again.
    return _PLACEHOLDER.sub(lambda match: replacements.get(match.group(0), match.group(0)), _TEMPLATE)
