"""Reports for people and machines: the terminal summary, JSON, JUnit XML, and the generated check reference."""

from conformance.report.files import write_json, write_junit
from conformance.report.terminal import render_terminal

__all__ = ["render_terminal", "write_json", "write_junit"]
