"""Cassette files: discovering recordings with expectations, checking, writing and recording them.

Top layer, beside the reports and the CLI: it reads and writes what the suites consume.

* ``hygiene``: ``cassettes check`` (schema, decode, expectation, secrets);
* ``written`` / ``writer``: the bundled corpus's definitions and the writer (``python -m conformance.corpus``);
* ``multiturn``: the multi-turn cassettes of the round-trip demo;
* ``record`` / ``fake_provider``: ``toolcall-conformance record`` and its offline test server.


Finding recordings with expectations (cases) is the wire layer's job: ``conformance.wire.cases``.
"""

from conformance.corpus.hygiene import Finding, check_cassettes

__all__ = ["Finding", "check_cassettes"]
