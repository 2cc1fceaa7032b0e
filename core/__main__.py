"""``python -m core`` = the ``gui-agent`` command."""

import shlex
import sys

from core.interpreter import require

if __name__ == "__main__":
    require(command=shlex.join(["gui-agent", *sys.argv[1:]]))
    from core.cli import main

    main()
