"""Acting beyond read-only: checkpoints before every change (more in README.md)."""
