"""Benchmarks for issue 5: scaling, overhead over the SDK floor, peers, memory and the suite itself.

Run them all with ``python -m benchmarks`` (``--quick`` for a smoke test); results and method are in
``benchmarks/README.md``. Not part of the installed package.
"""
