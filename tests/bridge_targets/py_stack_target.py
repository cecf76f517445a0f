"""A byte-level bridge target in Python: serves any in-process stack over protocol 1.

    python tests/bridge_targets/py_stack_target.py MODULE:STACK [--capabilities JSON]

It exists so the tests can check one and the same stack in process (``run --stack``) and over the
bridge (``run --bridge``): both reach ``run_stack_conformance``, so the verdicts must be identical.
"""

from __future__ import annotations

import argparse
import base64
import importlib
import json
import os
import sys
from typing import Any

sys.path.insert(0, os.getcwd())


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"tcc": 1, **message}) + "\n")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("stack")
    parser.add_argument("--capabilities", default="{}")
    args = parser.parse_args()
    module, _, attribute = args.stack.partition(":")
    stack = getattr(importlib.import_module(module), attribute)
    send(
        {
            "type": "hello",
            "protocol": [1],
            "level": "bytes",
            "target": {"name": args.stack},
            "capabilities": json.loads(args.capabilities),
        }
    )
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("type") == "bye":
            break
        if request.get("type") == "start":
            send({"type": "ready"})
            continue
        pieces = [base64.b64decode(piece) for piece in request["pieces"]]
        try:
            answer: dict[str, Any] = {"ok": stack(request["api"], pieces, request.get("options") or {})}
        except Exception as error:  # noqa: BLE001 - the stack under test may raise anything: it is data
            answer = {"raised": {"type": type(error).__name__, "message": str(error), "class": "other"}}
        send({"id": request["id"], **answer})


if __name__ == "__main__":
    main()
