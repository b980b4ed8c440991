"""Fixtures of the text tests: the context tests' cold caches."""

from tests.context.conftest import cold_caches  # noqa: F401  (an autouse fixture)
