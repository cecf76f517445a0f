"""Independent alternative implementations, written from the documented contract only (no reference_impl).

``api_handler`` (provider-native calls), ``text_parser_xml`` / ``_json`` / ``_sentinel`` (calls
embedded in text), ``converter`` (OpenAI Chat stream -> own chunk type), ``formatter`` (round-trip
follow-ups and tool parameters). ``tests/test_alternatives.py`` runs the suite on each;
``FALSE_ALARMS.md`` lists where the suite flags a legitimate choice.
"""
