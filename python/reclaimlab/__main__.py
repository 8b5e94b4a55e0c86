import sys

from .cli import main

# Guarded: the sweep's worker processes (multiprocessing "spawn") import the parent's main
# module under another name, and must not run the command line again.
if __name__ == "__main__":
    sys.exit(main())
