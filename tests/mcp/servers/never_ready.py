"""A stdio "server" that never answers the handshake (reads stdin forever): a startup timeout."""

import sys

if __name__ == "__main__":
    for _line in sys.stdin:
        pass
