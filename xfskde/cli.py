"""The ``xfskde`` command line.

Each subcommand lives in its own module of :mod:`xfskde.commands` with two functions:
``add_parser(subparsers)`` that declares it (and sets ``func``) and the function it runs.

**Exit statuses.** 0: done. 1: ``xfskde info`` found the store incomplete or damaged, or xfskde
itself failed (an internal error: one line, ``--debug`` for the traceback). 2: a mistake or a
fault a user can fix — an :class:`~xfskde.exceptions.XfskdeError`, a missing, unreadable or
damaged file (a TIFF tile that cannot be decoded while the blocks are computed is named with its
file), a full disk, a scheduler that does not answer, a bucket reached without credentials, a
server's refusal. 141: whoever read the output stopped (``xfskde info ... | head``; nothing is
printed). 130: interrupted (Ctrl-C); 143: terminated (SIGTERM, handled like Ctrl-C: no new block
starts, the blocks being computed end, and the store is left to ``--resume``). Each failure
prints one line on stderr, which says what a failed or interrupted write left behind and how to
finish it; ``--debug`` shows the traceback instead. Warnings are printed one line each at the
end of a run that succeeds, and dropped when it fails (its one line says what matters).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ._version import __version__
from .exceptions import XfskdeError
from .io._location import NEEDS_CREDENTIALS

__all__ = ["main"]

#: Subcommand modules in :mod:`xfskde.commands`, in the order ``--help`` lists them.
COMMANDS = ("demo", "coefficients", "maps", "info", "segment", "experiment")
#: What the libraries under xfskde raise for files and values a user can fix (tifffile, zarr,
#: dask, distributed); any of them, or an XfskdeError, is one line and exit status 2.
USER_ERRORS = (XfskdeError, OSError, ValueError, TypeError, KeyError, ImportError)
#: What the cloud SDKs raise where they find no credentials (botocore for s3fs, google-auth
#: for gcsfs, azure-identity for adlfs), by class name (none of them is a dependency): a fault
#: the user fixes by configuring them, not a bug of xfskde.
CREDENTIAL_ERRORS = (
    "NoCredentialsError", "PartialCredentialsError", "DefaultCredentialsError",
    "CredentialUnavailableError", "ClientAuthenticationError",
)  # fmt: skip
#: Exit statuses of an interrupted run: Ctrl-C, and SIGTERM (128 + the signal's number).
INTERRUPTED, TERMINATED = 130, 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that it is handled as Ctrl-C is."""


def build_parser() -> argparse.ArgumentParser:
    from .commands._options import use_defaults_formatter

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
    use_defaults_formatter(parser)  # every --help shows every option's default
    return parser


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """Turn SIGTERM into :class:`Terminated` while the command runs (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame: object) -> None:
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


#: The library's keywords that its messages name, as the command line spells them: a
#: refusal tells the user what to pass, and on the command line that is a flag.
_FLAGS = {"resume=True": "--resume", "overwrite=True": "--overwrite"}


def _one_line(exc: BaseException) -> str:
    """The message of an error, and its notes (what a write left behind), on one line, the
    keywords it names as the command's flags (:data:`_FLAGS`)."""
    message = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, KeyError):
        message = f"missing key {message}"
    notes = [" ".join(str(n).split()) for n in getattr(exc, "__notes__", ())]
    line = "; ".join([message, *notes])
    for keyword, flag in _FLAGS.items():
        line = line.replace(keyword, flag)
    return line


def _no_credentials(exc: Exception) -> str:
    """The one line for a bucket reached without credentials, and how to give them."""
    return (
        f"no credentials to reach the bucket ({type(exc).__name__}: {_one_line(exc)}): "
        "configure them as the cloud SDKs read them — AWS_ACCESS_KEY_ID and "
        "AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, for s3://; GOOGLE_APPLICATION_CREDENTIALS for "
        "gs:// — or read a public bucket anonymously (FSSPEC_S3_ANON=true, "
        "FSSPEC_GCS_TOKEN=anon)"
    )


def _answered(exc: Exception) -> str:
    """The one line for an HTTP server's refusal or failure while a file or store is read
    (aiohttp's ClientResponseError: a store's chunk, a tile), and what to do about it."""
    status, url = getattr(exc, "status", None), getattr(exc, "request_info", None)
    where = getattr(url, "real_url", None) or getattr(url, "url", "the server")
    said = f"{where}: the server answered {status} {getattr(exc, 'message', '')}"
    if status in (401, 403):
        return f"{said}: {NEEDS_CREDENTIALS}"
    if isinstance(status, int) and status >= 500:
        return f"{said} (its own failure): try again later (a write: with --resume)"
    return said


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    name = f"xfskde {args.command}"
    with _sigterm_interrupts(), contextlib.ExitStack() as stack:
        if not args.debug:  # each warning as one line, once, when it is raised
            stack.enter_context(warnings.catch_warnings())
            warnings.showwarning = _one_line_warnings(name)
        try:
            status = int(args.func(args) or 0)
            # now, not at exit: a reader that went away (| head) is a BrokenPipeError here
            sys.stdout.flush()
        except KeyboardInterrupt as exc:
            if args.debug:
                traceback.print_exc()
            signalled = "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"
            notes = [" ".join(str(n).split()) for n in getattr(exc, "__notes__", ())]
            print("; ".join([f"{name}: {signalled}", *notes]), file=sys.stderr)
            return TERMINATED if isinstance(exc, Terminated) else INTERRUPTED
        except BrokenPipeError:  # whoever read the output stopped (xfskde info ... | head)
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 128 + signal.SIGPIPE
        except USER_ERRORS as exc:
            if args.debug:
                raise
            print(f"{name}: error: {_one_line(exc)}", file=sys.stderr)
            return 2
        except Exception as exc:  # a bug: say so in one line, and where to see more
            if args.debug:
                raise
            if any(c.__name__ in CREDENTIAL_ERRORS for c in type(exc).__mro__):
                print(f"{name}: error: {_no_credentials(exc)}", file=sys.stderr)
                return 2
            if type(exc).__name__ == "ClientResponseError":  # aiohttp: a server's answer
                print(f"{name}: error: {_answered(exc)}", file=sys.stderr)
                return 2
            print(
                f"{name}: internal error: {type(exc).__name__}: {_one_line(exc)} (run it again "
                "with --debug for the traceback, and report it)",
                file=sys.stderr,
            )
            return 1
    return status


def _one_line_warnings(name: str) -> Callable[..., None]:
    """A ``warnings.showwarning`` that prints each warning as one line on stderr
    (``xfskde segment: warning: ...``), once, when it is raised: before the work it concerns
    (a mask taken for the wrong kind of image, seen before a slide's ten minutes), and before
    an error that ends the command (until 2026-11-30 the warnings were printed after the
    work, and not at all after an error). Deprecation warnings, which speak to a library's
    programmers (a dependency's use of another), are not the command's user's: left out."""
    shown: set[str] = set()

    def show(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
        if issubclass(category, DeprecationWarning | PendingDeprecationWarning):
            return
        line = " ".join(str(message).split())
        if line not in shown:
            shown.add(line)
            print(f"{name}: warning: {line}", file=sys.stderr, flush=True)

    return show


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
