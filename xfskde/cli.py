"""The ``xfskde`` command line.

Each subcommand lives in its own module of :mod:`xfskde.commands` with two functions:
``add_parser(subparsers)`` that declares it (and sets ``func``) and the function it runs. Errors
that a user can fix (an :class:`~xfskde.exceptions.XfskdeError`, a missing file, an unreadable
format) print one line on stderr and exit with status 2; ``--debug`` shows the traceback
instead.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ._version import __version__
from .exceptions import XfskdeError

__all__ = ["main"]

#: Subcommand modules in :mod:`xfskde.commands`, in the order ``--help`` lists them.
COMMANDS = ("demo", "coefficients", "info", "segment", "experiment")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="xfskde",
        description="Fourier-series kernel density estimates of gradient angles, at any scale.",
    )
    parser.add_argument("--version", action="version", version=f"xfskde {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show the full traceback when something fails"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f"xfskde.commands.{name}").add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status = args.func(args)
    except KeyboardInterrupt:
        print("xfskde: interrupted", file=sys.stderr)
        return 130
    except (XfskdeError, OSError, ValueError, TypeError, KeyError, ImportError) as exc:
        # XfskdeError: what the library refuses on purpose; the built-in kinds: what the
        # libraries under it (tifffile, zarr, dask) raise for files and values a user can fix
        if args.debug:
            raise
        message = str(exc) or type(exc).__name__
        if isinstance(exc, KeyError):
            message = f"missing key {message}"
        print(f"xfskde {args.command}: error: {message}", file=sys.stderr)
        return 2
    return int(status or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
