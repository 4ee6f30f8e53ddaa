"""``xfskde info STORE [--verify]``: shape, chunks, parameters and completeness of a store.

Any store xfskde writes: coefficients (``xfskde coefficients``) or labels (``xfskde segment``).
With ``--verify``, every chunk is read back and checked: damaged chunks (checksum mismatch,
undecodable) and missing ones (written, but gone) are listed, and the exit status is 1 unless
the store is complete and whole.
"""

from __future__ import annotations

import argparse

from ..exceptions import StoreCorruptError, StoreIncompleteError
from ..io import open_blocks, store_status
from ..io.stores import verify_store

#: Problems of each kind listed one per line before the rest are counted.
_LISTED = 50


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "info",
        help="describe a coefficient or label store (--verify: check every chunk)",
        description=__doc__.split(":", 1)[1].strip(),
    )
    parser.add_argument("store", help="a Zarr store written by xfskde")
    parser.add_argument(
        "--verify",
        action="store_true",
        help="read every chunk and check it: report damaged (checksum mismatch, undecodable) "
        "and missing chunks; exit status 1 if any",
    )
    parser.add_argument(
        "--workers", type=int, default=4, help="chunks read at the same time by --verify (4)"
    )
    parser.set_defaults(func=run)


def _describe(store: str) -> None:
    field = open_blocks(store, allow_incomplete=True)
    chunks = field.encoding.get("chunks") or field.encoding.get("preferred_chunks")
    print(f"variable  {field.name}")
    print(f"shape     {dict(field.sizes)}")
    print(f"dtype     {field.dtype}")
    print(f"chunks    {chunks}")
    for key, value in field.attrs.items():
        if key != "coordinates":
            print(f"{key:<9} {value}")


def _verify(store: str, workers: int) -> bool:
    """Print what reading every chunk found; True when the store is whole."""
    report = verify_store(store, workers=workers)
    problems = [p for p in report.problems if p.kind != "unwritten"]
    unwritten = len(report.problems) - len(problems)
    checked = "every checksum matches" if report.checksums else (
        "its chunks carry no checksum (written before xfskde checksummed them): only their "
        "presence and decoding were checked"
    )  # fmt: skip
    found = f"{len(problems)} damaged or missing" if problems else "none damaged or missing"
    if problems or not report.checksums:
        print(f"verify    {report.blocks_read} of {report.blocks_total} blocks read: {found}")
        if not report.checksums:
            print(f"verify    {checked}")
    else:
        print(f"verify    {report.blocks_read} of {report.blocks_total} blocks read: {checked}")
    for problem in problems[:_LISTED]:
        print(f"{problem.kind:<9} {problem.key}: {problem.detail}")
    if len(problems) > _LISTED:
        print(f"{'':<9} ... and {len(problems) - _LISTED} more")
    if unwritten:
        print(f"unwritten {unwritten} blocks not written yet: resume the write to finish them")
    return report.whole


def run(args: argparse.Namespace) -> int:
    status = store_status(args.store)
    print(f"store     {args.store}")
    state = "complete" if status["complete"] else "INCOMPLETE"
    print(f"status    {state} ({status['blocks_done']}/{status['blocks_total']} blocks)")
    try:
        _describe(args.store)
    except StoreIncompleteError as exc:  # a layout cut short: nothing to describe or verify
        print(f"layout    {exc}")
        return 1
    except StoreCorruptError as exc:
        if not args.verify:
            raise
        print(f"damaged   {exc}")
        whole = False
    else:
        whole = True
    if args.verify:
        whole = _verify(args.store, args.workers) and whole
    return 0 if status["complete"] and whole else 1
