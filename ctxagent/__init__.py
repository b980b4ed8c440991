"""ctxagent: a terminal coding agent built around context engineering.

Importing the package has no side effects: no files are created, nothing is printed.
"""

__version__ = "0.1.0"
