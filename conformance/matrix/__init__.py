"""The conformance matrix: the suite against the reference and every installed adapter, as one table.

* ``model``: ``Matrix`` (rows are checks, columns implementations, cells verdicts) and its JSON;
* ``runner``: ``run_matrix`` measures it (same profile and seed for every column);
* ``render``: ``matrix.json``, the Markdown table and the static HTML page, with counterexample files;
* ``reproductions``: the direct reproduction tests behind each failing cell.
"""

from conformance.matrix.model import Cell, Column, Matrix, Row, cell_differences
from conformance.matrix.runner import REFERENCE, MatrixRun, run_matrix

__all__ = ["REFERENCE", "Cell", "Column", "Matrix", "MatrixRun", "Row", "cell_differences", "run_matrix"]
