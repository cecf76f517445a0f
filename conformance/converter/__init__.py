"""The converter suite: does a converter turn a provider stream into the right ``ChunkResponse``s?

* ``checks``: the converter checks (each judges one recording's replay through the real SDK);
* ``factory``: the two accepted factory shapes (``factory(api, **options)`` or a zero-argument class);
* ``runner``: ``run_converter_conformance`` over every recording with an expectation, whole and
  cut at arbitrary byte offsets.
"""

from conformance.converter.checks import CONVERTER_CHECKS, ConverterContext, NotApplicable
from conformance.converter.factory import Converter, ConverterFactoryError, as_converter_factory
from conformance.converter.runner import run_converter_conformance

__all__ = [
    "CONVERTER_CHECKS",
    "Converter",
    "ConverterContext",
    "ConverterFactoryError",
    "NotApplicable",
    "as_converter_factory",
    "run_converter_conformance",
]
