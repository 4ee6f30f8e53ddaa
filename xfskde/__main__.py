"""``python -m xfskde``: the ``xfskde`` command (:func:`xfskde.cli.main`), for environments
whose scripts folder is not on the PATH (a notebook's kernel, a conda env not activated)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
