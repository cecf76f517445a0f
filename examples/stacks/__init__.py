"""Whole provider stacks on the real SDKs, written to be checked with ``run --stack`` (docs/stacks.md)."""
