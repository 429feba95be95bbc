"""The conformance step: scikit-learn's and imbalanced-learn's own test modules, run on gpuknn.

The installed peers' test files are copied into a temporary folder with their imports rewritten
(:mod:`.rewrite`) so that every name gpuknn provides under the peer's name comes from gpuknn;
:mod:`.harness` runs them with pytest in a subprocess (:mod:`.plugin` selects the tests that
touch gpuknn, applies ``deselected.toml`` and records the outcomes) and summarises the result.
``scripts/conformance.py`` prints the report; ``tests/test_conformance.py`` holds CI to
``thresholds.toml``. docs/conformance.md describes the step.
"""
