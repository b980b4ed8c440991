"""`python -m ctxagent ...`: the same CLI as the `ctxagent` console script."""

from ctxagent.cli.main import main

if __name__ == "__main__":
    main()
