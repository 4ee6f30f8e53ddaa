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
finish it, and names the command's options where the library's message names its keywords
(``nan_policy='omit'`` is said ``--nan-policy omit``, ``n_textures`` ``--textures``, ``use
eps=None`` ``leave out --eps``: a keyword the command has no option for is left as it is);
``--debug`` shows the traceback instead.
Warnings are printed one line each on stderr when they are raised, each text once (before the
work they concern, and before an error that ends the command); deprecation warnings are left
out.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import re
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
#: What botocore raises where the storage service's endpoint cannot be reached (by class
#: name: botocore is no dependency): the user's endpoint or network, not a bug of xfskde.
UNREACHABLE_ERRORS = (
    "EndpointConnectionError", "ConnectTimeoutError", "ReadTimeoutError", "ConnectionClosedError",
)  # fmt: skip
UNREACHABLE = (
    "check its URL (AWS_ENDPOINT_URL, FSSPEC_S3_ENDPOINT_URL, or storage_options' "
    "endpoint_url) and the network, then run it again"
)
#: What a bucket's refusal (s3fs's bare "Forbidden", "Access Denied") asks of the user.
DENIED = (
    "the storage service refused access: check the credentials (AWS_ACCESS_KEY_ID and "
    "AWS_SECRET_ACCESS_KEY, or AWS_PROFILE) and that the bucket's policy grants them this "
    "object, or read a public bucket anonymously (FSSPEC_S3_ANON=true)"
)
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


#: The library's parameters whose command-line option is not ``--`` and the parameter's name
#: with dashes (``color_bins`` is ``--color-bins``; these are not).
_OPTION_NAMES = {"n_textures": "--textures", "n_coefficients": "--coefficients"}
#: Parameters that a refusal names first, bare (``size must be a positive number``, ``plane
#: names 'z', ...``, ``channels: '9' is no channel ...``): on the command line, the option
#: (``--size must be ...``).
_LEADING = re.compile(r"^([a-z][a-z_]*)\b(?=: | (?:must|[-\d'(]|is |places |names ))")
#: A Python value as a refusal writes it after ``keyword=``: a quoted word, True, None, a
#: number, a tuple of quoted words, a dict of quoted names to integers, or nothing at all.
_VALUE = (
    r"'[^']*'|\"[^\"]*\"|True|None|-?\d[\w.+-]*"
    r"|\((?:'[^']*'(?:, )?)+\)|\{(?:'[^']*': -?\d+(?:, )?)+\}|(?=[\s,;:.)]|$)"
)
_KEYWORD = re.compile(rf"(?<![\w.'\"-])([a-z][a-z_]*)=({_VALUE})")
#: The command line's form that a message gives after the API's (``plane={'z': 0} (--plane z=0
#: on the command line)``), which is all a user of the command line needs.
_ALSO = re.compile(
    rf"(?<![\w.'\"-])[a-z][a-z_]*=(?:{_VALUE}) \((--[^()]*?)(?: on the command line)?\)"
)
#: A Python call given beside the option that does the same (``(--plane, open_image(plane=...))``,
#: ``(open_image(..., mpp=0.5), `xfskde segment --mpp 0.5`)``), with the ", " that joins it.
_CALL = re.compile(r"(, )?\b[a-z_]+\((?:\.\.\., )?([a-z][a-z_]*)=[^()]*\)(, )?")
_QUOTED = r"'([^']*)'"
_ON_THE_COMMAND_LINE = re.compile(r" ?\((--[^()]*?),? on the command line\)")
#: A refusal's advice that names a parameter bare (``give a size of at most 64``, ``leave dims
#: out``) or gives it None (``use eps=None to keep every coefficient``, said ``leave out
#: --eps``: the command line cannot spell None).
_ADVICE = re.compile(r"\b(give an? |leave )([a-z][a-z_]*)(?= of\b| out\b)")
_NONE = re.compile(r"\b(?:use|pass) ([a-z][a-z_]*)=None\b")


def _option(keyword: str, options: frozenset[str]) -> str | None:
    """The option of ``options`` that gives the library's parameter ``keyword``, or None."""
    option = _OPTION_NAMES.get(keyword, "--" + keyword.replace("_", "-"))
    return option if option in options else None


def _as_typed(option: str, value: str) -> str | None:
    """The words that give ``option`` the Python ``value`` on the command line, or None where
    the command line cannot spell it (``eps=None``: leave ``--eps`` out)."""
    if value == "True":
        return option
    if value == "None":
        return f"{option} none" if option == "--nodata" else None
    if not value:  # "pass level= ...": the option itself
        return option
    if value[0] in "'\"":
        return f"{option} {value[1:-1]}"
    if value[0] == "(":
        return f"{option} {','.join(re.findall(_QUOTED, value))}"
    if value[0] == "{":
        pairs = re.findall(r"'([^']*)': (-?\d+)", value)
        return f"{option} {','.join(f'{k}={v}' for k, v in pairs)}"
    return f"{option} {value}"


def _as_options(line: str, options: frozenset[str]) -> str:
    """``line`` with the library's keywords (``nan_policy='omit'``, ``plane={'z': 0}``,
    ``resume=True``, ``n_textures``) as ``options``, the command's, spell them: a refusal
    tells the user what to pass, and on the command line that is an option. A keyword the
    command has no option for is left as it is."""

    kept = []  # the keywords the command line cannot spell

    def keyword(match: re.Match[str]) -> str:
        option = _option(match[1], options)
        typed = None if option is None else _as_typed(option, match[2])
        if typed is None:
            kept.append(match[0])
        return match[0] if typed is None else typed

    def call(match: re.Match[str]) -> str:  # gone where its option is said beside it
        option = _option(match[2], options)
        if option is None or option not in line.replace(match[0], " "):
            return match[0]
        return ", " if match[1] and match[3] else ""

    line = _ALSO.sub(lambda m: m[1], line)
    line = _ADVICE.sub(lambda m: m[1] + (_option(m[2], options) or m[2]), line)
    line = _NONE.sub(
        lambda m: m[0] if (o := _option(m[1], options)) in (None, "--nodata") else f"leave out {o}",
        line,
    )
    line = _CALL.sub(call, line)
    line = _KEYWORD.sub(keyword, line)
    if not any(re.fullmatch(r"[a-z_]{2,}=.*", k) for k in kept):  # all said as options now
        line = _ON_THE_COMMAND_LINE.sub("", line)
    for name in {*_OPTION_NAMES, *re.findall(r"\b[a-z]+_[a-z_]+\b", line)}:
        option = _option(name, options)
        if option is not None:
            line = re.sub(rf"(?<![\w.'\"/-]){name}(?: =)?(?![\w=]|\.\w)", option, line)
    leading = _LEADING.match(line)
    if leading and (option := _option(leading[1], options)) is not None:
        line = option + line[leading.end() :]
    return line


def _one_line(exc: BaseException, options: frozenset[str] = frozenset()) -> str:
    """The message of an error, and its notes (what a write left behind), on one line, the
    library's keywords that it names as the command's ``options`` (:func:`_as_options`)."""
    message = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, KeyError):
        message = f"missing key {message}"
    notes = [" ".join(str(n).split()) for n in getattr(exc, "__notes__", ())]
    return _as_options("; ".join([message, *notes]), options)


def _options(parser: argparse.ArgumentParser, command: str) -> frozenset[str]:
    """The long options of ``parser``'s subcommand ``command``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            sub = action.choices[command]
            return frozenset(o for a in sub._actions for o in a.option_strings if o[:2] == "--")
    return frozenset()


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
    """Run the command line; returns the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after ``xfskde`` (``["info", "out.zarr"]``); None (the default):
        ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit status (module docstring): 0 done, 1 a failure of xfskde's own or what the
        command reports (``xfskde info`` of an incomplete store), 2 a user's mistake or fault,
        130 interrupted, 143 terminated, 141 a closed output.

    Raises
    ------
    SystemExit
        From argparse: status 0 after ``--help`` or ``--version``, 2 for arguments it cannot
        parse (its usage line printed).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    name = f"xfskde {args.command}"
    options = _options(parser, args.command)
    with _sigterm_interrupts(), contextlib.ExitStack() as stack:
        if not args.debug:  # each warning as one line, once, when it is raised
            stack.enter_context(warnings.catch_warnings())
            warnings.showwarning = _one_line_warnings(name, options)
        stack.enter_context(_library_log_on_stderr(name))
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
            line = _one_line(exc, options)
            if isinstance(exc, PermissionError) and "://" not in line:  # s3fs: "Forbidden"
                line = f"{line}: {DENIED}"
            print(f"{name}: error: {line}", file=sys.stderr)
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
            if any(c.__name__ in UNREACHABLE_ERRORS for c in type(exc).__mro__):
                print(f"{name}: error: cannot reach the storage service ({_one_line(exc)}): "
                      f"{UNREACHABLE}", file=sys.stderr)  # fmt: skip
                return 2
            print(
                f"{name}: internal error: {type(exc).__name__}: {_one_line(exc)} (run it again "
                "with --debug for the traceback, and report it)",
                file=sys.stderr,
            )
            return 1
    return status


class _OneLineLog(logging.Handler):
    """Prints each record of the logger ``xfskde`` (a cluster waited for that has no worker)
    as one line on stderr, ``xfskde coefficients: warning: ...``."""

    def __init__(self, name: str) -> None:
        super().__init__(logging.INFO)
        self.name_ = name

    def emit(self, record: logging.LogRecord) -> None:
        line = " ".join(record.getMessage().split())
        print(f"{self.name_}: {record.levelname.lower()}: {line}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _library_log_on_stderr(name: str) -> Iterator[None]:
    """While the command runs, what the library logs (logger ``xfskde``) is one line each on
    stderr, named as the command's warnings are (Python would print it bare)."""
    logger, handler = logging.getLogger("xfskde"), _OneLineLog(name)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)


def _one_line_warnings(name: str, options: frozenset[str] = frozenset()) -> Callable[..., None]:
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
        line = _as_options(" ".join(str(message).split()), options)
        if line not in shown:
            shown.add(line)
            print(f"{name}: warning: {line}", file=sys.stderr, flush=True)

    return show


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
