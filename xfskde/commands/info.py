"""``xfskde info STORE|IMAGE [--verify]``: what a store or an input image holds.

A store xfskde wrote — coefficients (``xfskde coefficients``) or labels (``xfskde segment``) —
is described by its variable, shape, dtype, chunks, completeness and attributes, one per line,
the values aligned; attributes that hold arrays (a label store's endmembers) are summarised by
their shape and dtype. With ``--verify``, every chunk is read back and checked: damaged chunks
(checksum mismatch, undecodable) and missing ones (written, but gone) are listed, and the exit
status is 1 unless the store is complete and whole — and for a store whose chunks carry no
checksum (written before xfskde checksummed them), whose values cannot be verified. The
``status`` row says both at once (``complete (12/12 blocks), but DAMAGED: 2 damaged or
missing, listed below``), as it says damaged metadata found without ``--verify``. An input
image (TIFF/OME-TIFF/SVS, Zarr, PNG, NPY) is described by its format (a palette PNG or GIF:
the indices it stores, and that they are read as their RGB colours) and, for each pyramid level
as :func:`xfskde.open_image` reads it, its shape, dtype, tile or chunk, and pixel size with its
unit when the file records one.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._labels import crs_wkt
from ..exceptions import ParameterError, StoreCorruptError, StoreIncompleteError
from ..io import locate, open_blocks, store_status
from ..io.geojson import (
    DETECTION_TYPES,
    feature_class,
    geojson_polygons,
    is_polygons,
    object_type,
    read_geojson,
    read_labels_attrs,
    regions_format,
)
from ..io.stores import (
    StoreProblem,
    StoreReport,
    check_metadata,
    source_changed,
    verify_store,
)
from ._images import crs_description, describe_image, is_image, level_table
from ._options import add_dims_option, location_option, workers_option

#: Problems of each kind listed one per line before the rest are counted.
_LISTED = 50
#: The narrowest key column (the verify section's keys: ``unwritten``).
_KEY_WIDTH = 9
#: Attribute lists with more items than this, or nested ones, are summarised as arrays.
_LISTED_ITEMS = 8
#: Attribute texts longer than this are cut, with their length.
_LONGEST_TEXT = 200


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "info",
        help="describe a store xfskde wrote (--verify: check every chunk) or an input image",
        description="Describe a store written by xfskde coefficients, maps or segment (Zarr "
        "or OME-Zarr): its completeness (exit status 1 when incomplete), variable, shape, "
        "dtype, chunks and attributes, arrays among them summarised by shape and dtype. With "
        "--verify, read every chunk back and list the damaged and missing ones (exit status 1 "
        "if any). Or describe an input image (TIFF/OME-TIFF/SVS, Zarr, PNG, NPY, JPEG 2000, "
        "VRT): its format and, for each pyramid level, its shape, dtype, tile or chunk, and "
        "pixel size when the file records one; or a GeoJSON of regions: its features by class, "
        "the frame of their coordinates and their extent.",
    )
    parser.add_argument(
        "store",
        metavar="STORE|IMAGE",
        type=location_option("a store's or an image's path or URL"),
        help="a Zarr store written by xfskde, or an image (TIFF/OME-TIFF/SVS, Zarr, PNG, NPY, "
        "JPEG 2000, VRT)",
    )
    parser.add_argument(
        "--verify",
        action="store_true",
        help="read every chunk of a store and check it: report damaged (checksum mismatch, "
        "undecodable) and missing chunks; exit status 1 if any",
    )
    parser.add_argument(
        "--workers", type=workers_option, default=4, help="chunks read at the same time by --verify"
    )
    add_dims_option(parser)
    parser.set_defaults(func=run)


def _print_rows(rows: Sequence[tuple[str, str]], width: int = _KEY_WIDTH) -> None:
    """``key  value`` lines, the values aligned one space after the longest key."""
    width = max([width, *(len(key) for key, _ in rows)])
    for key, value in rows:
        print(f"{key:<{width}} {value}".rstrip())


def _print_table(table: Sequence[Sequence[str]]) -> None:
    """Columns aligned, two spaces apart."""
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        print("  ".join(f"{cell:<{w}}" for cell, w in zip(row, widths, strict=True)).rstrip())


def attribute_text(value: Any) -> str:
    """An attribute's value on one line; arrays (nested or long lists) summarised as
    ``(3, 40) float64 array``, long texts cut."""
    if isinstance(value, list | tuple) and value:
        try:
            array = np.asarray(value)
        except ValueError:  # ragged
            return f"list of {len(value)} items"
        nested = array.ndim > 1 or array.dtype == object
        if array.dtype != object and (nested or array.size > _LISTED_ITEMS):
            return f"{array.shape} {array.dtype} array"
        if nested:
            return f"list of {len(value)} items"
    if isinstance(value, dict):
        text = json.dumps(value, default=str)
        if len(text) > _LONGEST_TEXT:
            return f"dict of {len(value)} keys: {', '.join(map(str, value))}"
    text = " ".join(str(value).split())
    if len(text) > _LONGEST_TEXT:
        return f"{text[:_LONGEST_TEXT]}... ({len(text)} characters)"
    return text


def _store_rows(store: str) -> list[tuple[str, str]]:
    field = open_blocks(store, allow_incomplete=True)
    chunks = field.encoding.get("chunks") or field.encoding.get("preferred_chunks")
    rows = [
        ("variable", str(field.name)),
        ("shape", str(dict(field.sizes))),
        ("dtype", str(field.dtype)),
        ("chunks", str(chunks)),
    ]
    wkt = crs_wkt(field)
    if wkt is not None:
        rows.append(("crs", crs_description(wkt)))
    rows += [(str(k), attribute_text(v)) for k, v in field.attrs.items() if k != "coordinates"]
    stale = _changed_source(field.attrs)
    if stale:
        rows.append(("STALE", stale))
    return rows


def _changed_source(attrs: dict) -> str | None:
    """What changed about a local input since the store was computed from it
    (:func:`xfskde.io.stores.source_changed`), for a row saying the store no longer matches
    it; None when it is the same, gone, remote or unrecorded."""
    changed = source_changed(attrs)
    if changed is None:
        return None
    source, then, now = changed
    return (
        f"{source} has changed since this store was computed from it ({then} then, {now} "
        "now): a resume writes it again; compute it again for results of the file as it is"
    )


def _damage(report: StoreReport) -> list[StoreProblem]:
    """The chunks :func:`~xfskde.io.stores.verify_store` found damaged or missing (blocks not
    written yet are not damage: the write was cut short)."""
    return [p for p in report.problems if p.kind != "unwritten"]


def _status(status: dict, damaged: int, unverified: bool) -> str:
    """The ``status`` row: complete or not, with its blocks, and, where the store was found
    damaged (its metadata, or chunks ``--verify`` read back) or its values could not be
    verified, so at once, not only in the rows below it: "complete" alone above a list of
    damaged chunks read as a sound store."""
    state = "complete" if status["complete"] else "INCOMPLETE"
    text = f"{state} ({status['blocks_done']}/{status['blocks_total']} blocks)"
    if damaged:
        return f"{text}, but DAMAGED: {damaged} damaged or missing, listed below"
    if unverified:
        return f"{text}, but UNVERIFIED: its chunks carry no checksum (verify below)"
    return text


def _verify_rows(report: StoreReport) -> list[tuple[str, str]]:
    """The rows of what reading every chunk found (``damaged   KEY: DETAIL``), a list of their
    own, printed after a blank line and aligned on the widest of their kinds."""
    problems = _damage(report)
    unwritten = len(report.problems) - len(problems)
    checked = "every checksum matches" if report.checksums else (
        "cannot verify their values: its chunks carry no checksum (written before xfskde "
        "checksummed them), so only their presence and decoding were checked; write it again "
        "with --overwrite to have them checked"
    )  # fmt: skip
    found = f"{len(problems)} damaged or missing" if problems else (
        "none damaged or missing" if report.checksums else "none missing or undecodable"
    )  # fmt: skip
    said = found if problems or not report.checksums else checked
    rows = [("verify", f"{report.blocks_read} of {report.blocks_total} blocks read: {said}")]
    if report.derived_arrays:  # an OME-Zarr image's coarser levels and label images
        rows.append(("verify", f"and {report.derived_read} chunks of the arrays made from them "
                     f"({', '.join(report.derived_arrays)})"))  # fmt: skip
    if not report.checksums:
        rows.append(("verify", checked))
    if report.uncounted:
        rows.append((
            "verify", f"{', '.join(report.uncounted)}: how many chunks they hold was not "
            "recorded (written before xfskde counted them), so a chunk of theirs that is gone "
            "cannot be told from one of fill values: write the store again with --overwrite to "
            "have them counted",
        ))  # fmt: skip
    rows += [(problem.kind, f"{problem.key}: {problem.detail}") for problem in problems[:_LISTED]]
    if len(problems) > _LISTED:
        rows.append(("", f"... and {len(problems) - _LISTED} more"))
    if problems:
        rows.append((
            "repair",
            "run the command that wrote it again with --resume --verify: it reads every block "
            "back and computes the damaged and missing ones again (or restore it from a copy)",
        ))  # fmt: skip
    if unwritten:
        rows.append(
            ("unwritten", f"{unwritten} blocks not written yet: resume the write to finish them")
        )
    return rows


def _describe_image(path: str, dims: tuple[str, ...] | None) -> None:
    description = describe_image(path, dims)
    rows = [("image", path), *description.rows, ("levels", str(len(description.levels)))]
    _print_rows(rows)
    print()
    _print_table(level_table(description.levels))


def _geojson_rows(path: str) -> list[tuple[str, str]]:
    """What a GeoJSON (or another vector file: :data:`~xfskde.io.geojson.VECTOR_FORMATS`)
    holds: its regions by class, the frame of its coordinates, and the texture model of one
    ``xfskde segment`` wrote."""
    document = read_geojson(path)
    features = document.get("features") or [document]
    names, detections = [], 0
    for feature in features:
        feature = feature if isinstance(feature, dict) else {}
        if object_type(feature) in DETECTION_TYPES:  # QuPath's cells: listed by their count
            detections += 1
            continue
        kind = (feature.get("geometry") or {}).get("type")
        names.append(f"{feature_class(feature) or 'unclassified'} ({kind})")
    crs = (document.get("crs") or {}).get("properties", {}).get("name")
    vertices = [ring for exterior, holes, _ in geojson_polygons(document)
                for ring in (exterior, *holes)]  # fmt: skip
    if vertices:  # where they lie: pixels of a slide, degrees, metres of a projection
        (x0, y0), (x1, y1) = (f(np.concatenate(vertices, axis=1), axis=1) for f in (np.min, np.max))
        extent = f"x {x0:.6g} to {x1:.6g}, y {y0:.6g} to {y1:.6g}"
    else:
        extent = "no Polygon or MultiPolygon (a mask needs regions)"
    rows = [
        ("file", str(path)),
        ("format", regions_format(path)),
        ("features", f"{len(features)}: {', '.join(names[:8])}{' ...' * (len(names) > 8)}"
         + (f"{', ' * bool(names)}{detections} detections" if detections else "")),
        ("coordinates", crs_description(crs) if crs else "no CRS: WGS 84 on an image with "
         "a CRS (RFC 7946), else pixels of the image's level 0 (QuPath's)"),
        ("extent", extent),
    ]  # fmt: skip
    if detections:
        rows.insert(3, ("detections", f"{detections} of QuPath's detections, cells or tiles "
                        "(left out of a mask: not regions of interest)"))  # fmt: skip
    recorded = document.get("xfskde")
    if regions_format(path) == "GeoPackage":  # the model in its layer's metadata
        recorded = read_labels_attrs(path)
    if isinstance(recorded, dict) and "n_textures" in recorded:
        rows.append(("xfskde", f"the regions of {recorded['n_textures']} textures and their "
                     "texture model (--model takes it; --mask draws them)"))  # fmt: skip
    return rows


def run(args: argparse.Namespace) -> int:
    if not locate(args.store).exists() and not str(args.store).endswith(".zarr"):
        raise FileNotFoundError(f"no such store or image: {args.store}")
    if is_polygons(args.store):
        if args.verify:
            raise ParameterError(
                f"--verify checks a store's chunks; {args.store} is a {regions_format(args.store)}"
            )
        _print_rows(_geojson_rows(args.store))
        return 0
    if is_image(args.store):
        if args.verify:
            raise ParameterError(
                f"--verify checks the chunks of a store written by xfskde; {args.store} is an "
                "input image: run xfskde info without --verify"
            )
        _describe_image(args.store, args.dims)
        return 0
    status = store_status(args.store)
    rows = [("store", str(args.store)), ("status", _status(status, 0, False))]
    if not status["complete"] and status["blocks_done"] == status["blocks_total"] > 0:
        rows.append(
            ("unfinished", "every block is written, but not what follows them (an OME-Zarr "
             "image's pyramid, labels and metadata): resume the write to finish it")
        )  # fmt: skip
    if status["blocks_skipped"]:
        computed = status["blocks_done"] - status["blocks_skipped"]
        rows.append(
            ("blocks", f"{computed} computed, {status['blocks_skipped']} skipped (no foreground "
             "under the mask: stored as the fill value, never read or computed)")
        )  # fmt: skip
    # read through the consolidated metadata, a store whose zarr.json files are damaged would
    # read whole here and fail in other readers: --verify lists them with the rest
    metadata = () if args.verify else check_metadata(args.store)
    rows += [("damaged", f"{problem.key}: {problem.detail}") for problem in metadata]
    # entries of the completion record gone from a store that says it is complete (their
    # chunks deleted: read as "not written"), which --verify lists one by one
    gone = 0 if args.verify or not status["complete"] else (
        status["blocks_total"] - status["blocks_done"])  # fmt: skip
    if gone:
        entries = "entry" if gone == 1 else "entries"
        rows.append(("damaged", f"{gone} {entries} of its completion record gone (xfskde_blocks):"
                     " --verify lists them; a --resume computes their blocks again"))  # fmt: skip
    try:
        rows += _store_rows(args.store)
    except StoreIncompleteError as exc:  # a layout cut short: nothing to describe or verify
        rows[1] = ("status", _status(status, len(metadata), False))
        _print_rows([*rows, ("layout", str(exc))])
        return 1
    except StoreCorruptError as exc:
        if not args.verify:  # the error, the last line, names it
            rows[1] = ("status", _status(status, len(metadata) + 1, False))
            _print_rows(rows)
            raise
        rows.append(("damaged", str(exc)))
        corrupt = 1
    else:
        corrupt = 0
    damaged = len(metadata) + corrupt + gone
    report = None
    if args.verify:  # read before the rows are printed: their status says what it found
        try:
            report = verify_store(args.store, workers=args.workers)
        except Exception:
            _print_rows(rows)
            raise
        # it reads every chunk and metadata file, the one found unreadable above among them
        damaged = max(len(_damage(report)), corrupt)
    unverified = report is not None and not report.checksums
    rows[1] = ("status", _status(status, damaged, unverified))
    _print_rows(rows)
    if report is not None:
        print()
        _print_rows(_verify_rows(report))
    # values that could not be checked: not whole
    whole = not damaged and (report is None or (report.whole and report.checksums))
    return 0 if status["complete"] and whole else 1
