"""Build hook for the one optional compiled module; all other metadata is in pyproject.toml.

`ctxagent.context._chunkscan` speeds up context selection (docs/benchmarks.md). It is
optional: where no C compiler or Python headers are at hand the build warns and goes on,
and ctxagent runs the same computation in pure Python (`ctxagent doctor` says which).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("ctxagent.context._chunkscan", ["ctxagent/context/_chunkscan.c"], optional=True)])
