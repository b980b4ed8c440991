"""CLI unit-test fixtures: the agent factory of tests/agent is shared here."""

from tests.agent.conftest import make_agent  # noqa: F401  (a pytest fixture re-exported)
