"""THE block engine: a haloed NumPy block function mapped over the spatial chunks of a Dask array.

Every image consumer (the coefficient field, segmentation's fit sample, abundances and labels)
runs through :func:`map_haloed`, and every chunking default comes from :func:`plan_chunks`:

* **Halo.** Each chunk is given ``halo`` extra pixels of its real neighbours on every side that
  is not an image edge (``dask.array.overlap.overlap`` with ``boundary="none"``); the halo comes
  from the consumer's own parameters (a window's :attr:`~xfskde.windows.Window.depth`, a feature
  stack's depth). The *true* image edge is the block function's business — the coefficient core
  reads beyond it through ``scipy.ndimage``-style boundary index maps, segmentation mirrors it —
  so no pixel is ever invented by Dask. Only the spatial axes overlap; trailing axes (colour)
  are one chunk.
* **Chunks smaller than the halo** cannot lend their neighbours a halo: runs of them are joined
  into blocks near :data:`DEFAULT_CHUNK`, a lone one into a neighbour (:func:`safe_chunks`),
  and a :class:`~xfskde.exceptions.ChunkSizeWarning` says so, always.
* **Output chunks are declared**, never trimmed after the fact (dask #11961): the block function
  returns exactly the samples of its own chunk on the stride grid of :mod:`xfskde._grid`, which
  is anchored to the image origin, not to the chunk. A chunk covering rows ``[a, b)`` computes
  the samples ``first_sample(a) .. first_sample(b) - 1``.
* **Regular chunks by construction.** :func:`plan_chunks` cuts an axis into multiples of
  ``lcm(file tile, stride)``, so that each task reads whole tiles of the file and each output
  chunk holds ``side / stride`` samples: the Zarr writer never rechunks.
* **One thread per task.** Inside Dask tasks the block functions run single-threaded: Dask owns
  the parallelism (the in-memory NumPy face may use every core).
* **In-memory arrays are not copied.** :func:`dask_view` makes a Dask array whose tasks slice a
  NumPy array (or read a file) in place: ``dask.array.from_array`` copies any array it is given
  (dask #11850), a whole memory-mapped file included.
"""

from __future__ import annotations

import math
import uuid
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import dask
import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.core import get_dependencies
from dask.highlevelgraph import HighLevelGraph

from ._grid import MaskFootprint, first_sample, mask_at_samples, sample_chunks
from ._version import __version__
from .exceptions import ChunkSizeWarning, DimensionError, find_stack_level
from .gradients import check_finite, result_float_dtype
from .local import LocalParameters, local_fskde_block

__all__ = [
    "DEFAULT_CHUNK",
    "LARGE_CHUNK",
    "ArrayView",
    "ChunkSizeWarning",
    "dask_view",
    "local_fskde_dask",
    "map_haloed",
    "map_regions",
    "oversized",
    "plan_chunks",
    "safe_chunks",
    "sample_chunks",
]

#: Default target side of a chunk, in input pixels (about 4 Mpx: a few tens of MB per task).
DEFAULT_CHUNK = 2048
#: Dask chunks more than this many times a consumer's target side (:data:`DEFAULT_CHUNK` for
#: the coefficient field, segmentation's own) are split by :func:`plan_chunks` first: a chunk
#: is one task, on one thread.
LARGE_CHUNK = 2


def _version_guard(expected: str) -> Callable[[], None]:
    """A check, for the engine's tasks, that the xfskde running a task is ``expected``, this
    client's version: else an ImportError naming the worker and both versions.

    The cluster's workers are compared with the client when a computation starts
    (:func:`xfskde._scheduling.check_versions`); a worker that joins later (an adaptive
    cluster, a job queue's worker started from another environment) is not, and ran the
    tasks with its own code. The engine's task functions are closures, which a cluster
    pickles by value; so is this check (a function made here, not importable by name), and
    its ``expected`` travels with it, while the version it compares is read on the worker."""

    def same_version() -> None:
        from xfskde import _version  # the running process's own, on a worker

        if _version.__version__ != expected:
            try:
                from distributed import get_worker

                where = f" ({get_worker().address})"
            except (ImportError, ValueError):  # not a distributed worker
                where = ""
            raise ImportError(
                f"a worker of the Dask cluster{where} runs another version of xfskde than "
                f"this client (xfskde {_version.__version__} there, {expected} here): install "
                "the same version where the workers run (a task of another version computes "
                "other numbers, or fails)"
            )

    return same_version


#: The engine's tasks' check of the version that runs them (:func:`_version_guard`).
_same_version = _version_guard(__version__)


def oversized(image: da.Array, target: int) -> bool:
    """Whether a Dask image has a spatial chunk more than :data:`LARGE_CHUNK` times ``target``
    on a side: its consumers cut such chunks by :func:`plan_chunks` first.

    Parameters
    ----------
    image : dask.array.Array
        ``(y, x, ...)``: its first two axes are the spatial ones.
    target : int
        The wanted chunk side, in pixels (:data:`DEFAULT_CHUNK` for the engine).

    Returns
    -------
    bool
        True when a row or column chunk is longer than ``LARGE_CHUNK * target``.
    """
    return max(max(image.chunks[0]), max(image.chunks[1])) > LARGE_CHUNK * target


class ArrayView:
    """An in-memory array as :func:`dask_view` hands it to Dask: its shape, dtype and slices,
    and no ``copy`` (``dask.array.from_array`` copies what has one).

    Parameters
    ----------
    array : numpy.ndarray
        Read by the tasks in place (a slice of a NumPy array is a view; of a memory map, pages
        read from the file).
    """

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    @property
    def shape(self) -> tuple[int, ...]:
        """The array's shape."""
        return self.array.shape

    @property
    def dtype(self) -> np.dtype:
        """The array's dtype."""
        return self.array.dtype

    @property
    def ndim(self) -> int:
        """The array's number of axes."""
        return self.array.ndim

    def __getitem__(self, key: Any) -> np.ndarray:
        return self.array[key]


def dask_view(source: Any, chunks: Any, *, name: str | None = None) -> da.Array:
    """A Dask array of ``source`` whose tasks slice it in place, without copying it first.

    ``dask.array.from_array`` copies any array that has a ``copy`` method before it builds its
    graph (dask #11850): a 2048² RGB float64 image was copied each time segmentation or a store
    writer wrapped it (0.14 s and 100 MB apiece), and ``open_image`` of a 1.2 GB ``.npy`` file
    read the whole file into memory (2.5 GB peak, 3.7 s) to open it lazily.

    Parameters
    ----------
    source : numpy.ndarray or array-like
        A NumPy array (memory maps included), or an object with ``shape``, ``dtype``, ``ndim``
        and NumPy slicing that returns NumPy arrays (a file reader that opens the file in each
        task).
    chunks
        As ``dask.array.from_array`` takes them.
    name : str, optional
        The graph's name; default a random ``xfskde-array-…`` (hashing the pixels to name them
        cost 22 ms per 2048² RGB image).

    Returns
    -------
    dask.array.Array
    """
    if isinstance(source, np.ndarray):
        source = ArrayView(source)
    return da.from_array(
        source,
        chunks=chunks,
        name=name or f"xfskde-array-{uuid.uuid4().hex}",
        asarray=False,
        fancy=False,
        meta=np.empty((0,) * source.ndim, source.dtype),
    )


def _axis_side(n: int, unit: int, target: int, halo: int) -> int:
    """A chunk side for an axis of ``n`` pixels: a multiple of ``unit`` near ``target``.

    Among the multiples of ``unit`` nearest ``target`` (first those at least as large as the
    halo), the first whose last chunk is empty or at least ``halo`` long; one chunk if none is.
    """
    if n <= max(target, halo, unit):
        return n
    base = max(1, round(target / unit))
    for step in range(base + 1):
        for k in (base + step, base - step):
            side = k * unit
            if side < max(unit, halo) or side >= n:
                continue
            rest = n % side
            if rest == 0 or rest >= halo:
                return side
    return n


def plan_chunks(
    shape: Sequence[int],
    *,
    tiles: Sequence[int] | None = None,
    target: int | Sequence[int] = DEFAULT_CHUNK,
    halo: int = 0,
    stride: int = 1,
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The one chunk planner: Dask chunks of the two spatial axes of an image.

    Each axis is cut into equal chunks whose side is a multiple of ``lcm(tile, stride)`` near
    ``target``, with a last chunk that is either the same size, a remainder of at least ``halo``
    pixels, or absent; an axis no longer than the target is one chunk. Then

    * every task reads whole tiles of the file (``tiles``),
    * every chunk can lend its neighbours a halo (no merge, no warning),
    * every output chunk of a stride-``s`` result holds ``side / s`` samples (the last one
      fewer), so the output is regular and is written to Zarr without a rechunk.

    Parameters
    ----------
    shape : (int, int)
        Height and width of the image in pixels.
    tiles : (int, int), optional
        The file's native tile or chunk shape (default 1: none).
    target : int or (int, int), optional
        Wanted chunk side in pixels (default :data:`DEFAULT_CHUNK`).
    halo : int, optional
        Pixels a block needs from its neighbours (:attr:`xfskde.windows.Window.depth`).
    stride : int, optional
        Stride of the result's sample grid.

    Returns
    -------
    (tuple of int, tuple of int)
        The row chunks and the column chunks.

    Raises
    ------
    DimensionError
        For an image with no pixel along an axis.

    Examples
    --------
    >>> plan_chunks((5000, 300), tiles=(512, 512), target=2048, halo=9, stride=8)
    ((2048, 2048, 904), (300,))
    """
    height, width = (int(n) for n in shape[:2])
    if height < 1 or width < 1:
        raise DimensionError(f"the image is empty (shape {tuple(shape)}): nothing to compute")
    tiles = (1, 1) if tiles is None else tuple(max(1, int(t)) for t in tiles)
    targets = (target, target) if np.isscalar(target) else tuple(target)
    out = []
    for n, tile, want in zip((height, width), tiles, targets, strict=True):
        unit = math.lcm(tile, int(stride))
        side = _axis_side(n, unit, max(1, int(want)), int(halo))
        out.append((side,) * (n // side) + ((n % side,) if n % side else ()))
    return out[0], out[1]


def safe_chunks(
    chunks: tuple[int, ...], depth: int, target: int = DEFAULT_CHUNK
) -> tuple[int, ...]:
    """One axis's ``chunks`` with those smaller than ``depth`` merged, so that every chunk can
    lend its neighbours a halo (a single chunk is always safe).

    Chunks of at least ``depth`` are kept as they are. A run of consecutive smaller chunks is
    joined into pieces of about ``target`` (as few as keep each at most ``target``, cut at the
    run's own chunk boundaries, so a task still reads whole input chunks); a piece still
    shorter than ``depth`` (a run shorter than the halo) joins its smaller neighbour. So no
    chunk grows beyond ``max(target, largest chunk) + depth``: tiny chunks never make one task
    of the whole axis.

    Parameters
    ----------
    chunks : tuple of int
        The chunks of one axis.
    depth : int
        The halo each block needs from its neighbours.
    target : int, optional
        The side the merged pieces of a run of small chunks approach (default
        :data:`DEFAULT_CHUNK`).

    Returns
    -------
    tuple of int
        The merged chunks, summing to the same length.

    Examples
    --------
    >>> safe_chunks((10, 10, 3), 5)
    (10, 13)
    >>> safe_chunks((1,) * 10, 3, target=4)
    (3, 4, 3)
    """
    out = [int(c) for c in chunks if c > 0]
    if len(out) <= 1:
        return tuple(out) or tuple(chunks)
    target = max(int(target), int(depth), 1)
    pieces: list[int] = []
    run: list[int] = []
    for c in [*out, None]:
        if c is not None and c < depth:
            run.append(c)
            continue
        if run:
            pieces.extend(_split_run(run, target))
            run = []
        if c is not None:
            pieces.append(c)
    # a piece still shorter than the halo joins its smaller neighbour
    while len(pieces) > 1 and min(pieces) < depth:
        i = pieces.index(min(pieces))
        if i == 0 or (i < len(pieces) - 1 and pieces[i + 1] < pieces[i - 1]):
            j = i + 1
        else:
            j = i - 1
        pieces[min(i, j)] = pieces[i] + pieces[j]
        del pieces[max(i, j)]
    return tuple(pieces)


def _split_run(run: list[int], target: int) -> list[int]:
    """A run of small chunks joined into as few pieces as keep each near ``target`` or below,
    cut at the run's chunk boundaries nearest equal shares (:func:`safe_chunks`)."""
    total = sum(run)
    n = max(1, math.ceil(total / target))
    ends = np.cumsum(run)
    cuts = sorted({int(ends[np.abs(ends - total * k / n).argmin()]) for k in range(1, n)} - {total})
    return np.diff([0, *cuts, total]).tolist()  # cuts: distinct, between 0 and total


def _merged(before: tuple[int, ...], after: tuple[int, ...], halo: int, axis: str) -> str:
    """What :func:`safe_chunks` did to one axis, in a few words for the warning (never the
    chunks themselves: an axis may have thousands)."""
    if before == after:
        return f"{axis}s unchanged"
    small = sum(1 for c in before if c < halo)
    return (f"{axis}s {len(before)} chunks of {_sides(before)} pixels ({small} below it) -> "
            f"{len(after)} of {_sides(after)}")  # fmt: skip


def _sides(chunks: tuple[int, ...]) -> str:
    """``"8"`` or ``"8 to 12"``: the sides of an axis's chunks."""
    low, high = min(chunks), max(chunks)
    return f"{low}" if low == high else f"{low} to {high}"


def map_haloed(
    block_function: Callable[..., np.ndarray],
    image: da.Array,
    *,
    halo: int,
    stride: int = 1,
    trailing: Sequence[int] = (),
    per_block: bool = False,
    periodic: bool = False,
    dtype: Any,
    name: str,
    token: Any = None,
    skip: Callable[[tuple[int, int], tuple[int, int]], bool] | None = None,
    fill: Any = 0,
    shared: Any = None,
) -> da.Array:
    """Map a haloed block function over the spatial chunks of ``image``: THE engine.

    Parameters
    ----------
    block_function : callable
        ``block_function(block, *, image_shape, src_origin, rows, cols, block_id)`` returning an
        array of shape ``(rows[1] - rows[0], cols[1] - cols[0], *trailing)`` — or, with
        ``per_block``, ``(1, 1, *trailing)``. ``block`` holds the chunk and the ``halo`` pixels
        of its neighbours on every side that is not an image edge (spatial axes first, trailing
        axes whole); ``src_origin`` is the global (row, column) of ``block[0, 0]``;
        ``image_shape`` the (height, width) of the whole image; ``rows`` and ``cols`` the
        half-open ranges of *sample* indices of the chunk's own pixels on the stride grid;
        ``block_id`` the chunk's (row, column) index. It runs single-threaded.
    image : dask.array.Array
        ``(y, x, *rest)``.
    halo : int
        Pixels of the neighbours each block needs; chunks smaller than it are merged by
        :func:`safe_chunks` (with a :class:`~xfskde.exceptions.ChunkSizeWarning`).
    stride : int, optional
        The output's sample grid (1: every pixel).
    trailing : sequence of int, optional
        Sizes of the output's trailing axes (each one chunk).
    per_block : bool, optional
        One output element per chunk instead of one per sample (a per-block summary).
    periodic : bool, optional
        The image wraps around (a ``"wrap"`` boundary): chunks at an image edge are given the
        pixels of the opposite edge as their halo (``boundary="periodic"``), at global indices
        below 0 or past the end, so ``src_origin`` may be negative. Axes of one chunk get no
        halo either way: the block holds the whole axis.
    dtype : dtype
        The output's dtype.
    name : str
        Prefix of the tasks' names, saying what they do (``"xfskde-coefficients"``).
    token : object, optional
        Everything besides the image that determines the output (hashed into the tasks' keys,
        so two different results in one graph never share a key).
    skip : callable, optional
        ``skip(rows, cols)`` with a chunk's half-open (row, column) pixel ranges: True for a
        chunk that is not to be computed (background, outside a mask). Its output block is
        ``fill`` from a task with no input, so Dask neither reads nor computes anything for it
        (its pixels are read only as the halo of a computed neighbour). Asked once per chunk,
        on the client, after small chunks are merged.
    fill : scalar, optional
        The value of skipped blocks.
    shared : object, optional
        A value every task needs (a foreground mask): it becomes one node of the graph, a
        dependency of the tasks, so it travels to each worker once rather than inside every
        task, and reaches ``block_function`` as the keyword ``shared``.

    Returns
    -------
    dask.array.Array
        ``(ny, nx, *trailing)`` with declared chunks.
    """
    rest = image.ndim - 2
    height, width = image.shape[:2]
    row_chunks = safe_chunks(image.chunks[0], halo)
    col_chunks = safe_chunks(image.chunks[1], halo)
    if (row_chunks, col_chunks) != image.chunks[:2]:
        warnings.warn(
            f"chunks smaller than the overlap depth ({halo} pixels) were merged with their "
            f"neighbours: {_merged(image.chunks[0], row_chunks, halo, 'row')}, "
            f"{_merged(image.chunks[1], col_chunks, halo, 'column')}. Choose chunks of at least "
            f"{halo} pixels (xfskde.lazy.plan_chunks) to avoid the rechunk.",
            ChunkSizeWarning,
            stacklevel=find_stack_level(),
        )
    image = image.rechunk({0: row_chunks, 1: col_chunks, **dict.fromkeys(range(2, 2 + rest), -1)})
    if per_block:
        spatial = ((1,) * len(row_chunks), (1,) * len(col_chunks))
    else:
        spatial = (sample_chunks(row_chunks, stride), sample_chunks(col_chunks, stride))
    out_chunks = (*spatial, *((int(n),) for n in trailing))
    row_starts = np.concatenate([[0], np.cumsum(row_chunks)]).astype(int)
    col_starts = np.concatenate([[0], np.cumsum(col_chunks)]).astype(int)
    # an axis of one chunk has no neighbour to borrow from (and may be smaller than the halo)
    depth = {
        0: halo if len(row_chunks) > 1 else 0,
        1: halo if len(col_chunks) > 1 else 0,
        **dict.fromkeys(range(2, 2 + rest), 0),
    }
    overlapped = image
    if depth[0] or depth[1]:
        overlapped = da.overlap.overlap(
            image, depth=depth, boundary="periodic" if periodic else "none"
        )
    extra = () if shared is None else (dask.delayed(shared, pure=True),)
    key = f"{name}-" + tokenize(
        overlapped.name, halo, stride, tuple(trailing), per_block, token, [e.key for e in extra]
    )

    def block(x: np.ndarray, *value: Any, block_info: dict | None = None) -> np.ndarray:
        _same_version()
        bi, bj = block_info[0]["chunk-location"][:2]
        a, b = row_starts[bi], row_starts[bi + 1]
        c, d = col_starts[bj], col_starts[bj + 1]
        top = depth[0] if periodic else min(depth[0], a)
        left = depth[1] if periodic else min(depth[1], c)
        return block_function(
            x,
            image_shape=(height, width),
            src_origin=(int(a - top), int(c - left)),
            rows=(first_sample(a, stride), first_sample(b, stride)),
            cols=(first_sample(c, stride), first_sample(d, stride)),
            block_id=(int(bi), int(bj)),
            **({"shared": value[0]} if value else {}),
        )

    n_out = 2 + len(trailing)
    computed = da.map_blocks(
        block,
        overlapped,
        *extra,
        drop_axis=list(range(2, 2 + rest)) or None,
        new_axis=list(range(2, n_out)) or None,
        chunks=out_chunks,
        dtype=dtype,
        meta=np.empty((0,) * n_out, dtype=dtype),
        name=key,
    )
    if skip is None:
        return computed
    skipped = {
        (bi, bj)
        for bi in range(len(row_chunks))
        for bj in range(len(col_chunks))
        if skip(
            (int(row_starts[bi]), int(row_starts[bi + 1])),
            (int(col_starts[bj]), int(col_starts[bj + 1])),
        )
    }
    return _skipping(computed, skipped, fill, f"{name}{_SKIPPING}")


def map_regions(
    region_function: Callable[..., np.ndarray],
    image: da.Array,
    regions: Sequence[tuple[tuple[int, int], tuple[int, int]]],
    *,
    halo: int,
    trailing: Sequence[int],
    dtype: Any,
    name: str,
    token: Any = None,
    shared: Any = None,
    extra: Sequence[Any] | None = None,
) -> da.Array:
    """Map a haloed function over a few regions of ``image``, each read with its halo only:
    the engine's sparse counterpart of :func:`map_haloed`, for consumers that look at parts of
    an image (a fit's sample of tiles). A task reads the chunks that hold its region and halo,
    where :func:`map_haloed` of a block reads its neighbours' whole chunks too (nine chunks
    for one block inside the image).

    Parameters
    ----------
    region_function : callable
        ``region_function(block, *, image_shape, src_origin, rows, cols, extra)`` returning an
        array of shape ``trailing``, called as :func:`map_haloed` calls its block function
        (stride 1): ``block`` holds the region and the ``halo`` pixels around it that lie in
        the image, ``src_origin`` the global (row, column) of ``block[0, 0]``, ``rows`` and
        ``cols`` the region's half-open pixel ranges; ``extra`` the region's own item of
        ``extra`` (None without); with ``shared``, the keyword ``shared``. It runs
        single-threaded.
    image : dask.array.Array
        ``(y, x, *rest)``.
    regions : sequence of ((int, int), (int, int))
        Each region's half-open row and column ranges, inside the image.
    halo : int
        Pixels around each region that its function reads (cut at the image's edges).
    trailing : sequence of int
        The shape of each region's output.
    dtype : dtype
        The output's dtype.
    name : str
        As in :func:`map_haloed`.
    token : object, optional
        As in :func:`map_haloed`.
    shared : object, optional
        As in :func:`map_haloed`: one node of the graph, given to every task.
    extra : sequence, optional
        One value per region (a seed), hashed into its task's key.

    Returns
    -------
    dask.array.Array
        ``(len(regions), *trailing)``, one chunk per region.
    """
    height, width = image.shape[:2]
    node = None if shared is None else dask.delayed(shared, pure=True)
    extra = [None] * len(regions) if extra is None else list(extra)
    if len(extra) != len(regions):
        raise ValueError(f"extra has {len(extra)} values for {len(regions)} regions")

    def call(blocks: list, origin, rows, cols, value, shared_value=None) -> np.ndarray:
        _same_version()
        out = region_function(
            _joined(blocks),
            image_shape=(height, width),
            src_origin=origin,
            rows=rows,
            cols=cols,
            extra=value,
            **({} if node is None else {"shared": shared_value}),
        )
        return out[None]

    parts = []
    for ((a, b), (c, d)), value in zip(regions, extra, strict=True):
        if not (0 <= a < b <= height and 0 <= c < d <= width):
            raise ValueError(f"region rows {a}..{b}, columns {c}..{d} is not inside the image")
        top, left = max(0, a - halo), max(0, c - halo)
        piece = image[top : min(height, b + halo), left : min(width, d + halo)]
        # the piece's chunks as the image's graph has them, not each piece's graph optimized
        # apart (as a Dask array handed to a delayed call is): optimized apart, the fused tasks
        # of chunks that several pieces share were computed once per piece (a 16384² slide's
        # fit at f = 5: 123 chunk averages for 56 chunks, 3.5 s instead of 2.0)
        blocks = piece.to_delayed(optimize_graph=False).tolist()
        node_key = None if node is None else node.key
        key = f"{name}-" + tokenize(
            piece.name, (a, b), (c, d), halo, token, value, tuple(trailing), node_key
        )
        # named here: left to Dask, the closure's name is a token of its cloudpickle, which
        # pickled the region function with all it holds once per region (a quarter of a
        # 2048² image's fit)
        task = dask.delayed(call, name=f"{key}-call", pure=True)(
            blocks, (top, left), (a, b), (c, d), value, *(() if node is None else (node,)),
            dask_key_name=key,
        )  # fmt: skip
        parts.append(da.from_delayed(task, shape=(1, *trailing), dtype=dtype, name=f"{key}-out"))
    return da.concatenate(parts) if parts else da.empty((0, *trailing), dtype=dtype)


def _joined(blocks: list) -> np.ndarray:
    """The array of a nested list of chunks (one level per axis), as :func:`numpy.block` joins
    them; a single chunk as it is, not copied."""
    inner = blocks
    while isinstance(inner, list) and len(inner) == 1:
        inner = inner[0]
    return inner if isinstance(inner, np.ndarray) else np.block(blocks)


#: Name part of the layers that put a skipped block's fill in place of its computation.
_SKIPPING = "-skipping"


def skipped_blocks(array: da.Array, spatial: tuple[int, int] = (0, 1)) -> set[tuple[int, int]]:
    """The blocks of ``array`` made only of blocks that :func:`map_haloed` skipped.

    ``array`` is a result of :func:`map_haloed` or anything computed from one (maps of a field,
    a transposed or rechunked copy). A block counts as skipped when the tasks it depends on
    reach a skipped block's fill and no computed block of the engine, so a block that mixes
    the two counts as computed. The graph says it, wherever the array came from.

    Parameters
    ----------
    array : dask.array.Array
    spatial : (int, int)
        The array's row and column axes.

    Returns
    -------
    set of (int, int)
        (row, column) block indices along ``spatial``.
    """
    graph = array.__dask_graph__()
    fills: set = set()
    engines: set[str] = set()
    for layer_name, layer in graph.layers.items():
        if _SKIPPING not in layer_name:
            continue
        engines |= set(graph.dependencies.get(layer_name, ()))
        fills |= {k for k, v in layer.items() if isinstance(v, tuple) and v and v[0] is np.full}
    if not fills:
        return set()
    tasks = dict(graph)
    reach: dict = {}  # key -> (reaches a fill, reaches a computed block)

    def visit(key: Any) -> tuple[bool, bool]:
        stack, order = [key], []
        while stack:  # iterative depth-first walk: chains of tasks can be deep
            k = stack.pop()
            if k in reach or k in order:
                continue
            order.append(k)
            stack.extend(d for d in get_dependencies(tasks, k) if d not in reach)
        for k in reversed(order):
            name = k[0] if isinstance(k, tuple) else k
            found = (k in fills, name in engines)
            for d in get_dependencies(tasks, k):
                fill, engine = reach.get(d, (False, False))
                found = (found[0] or fill, found[1] or engine)
            reach[k] = found
        return reach[key]

    ny, nx = array.numblocks[spatial[0]], array.numblocks[spatial[1]]
    out = set()
    for by in range(ny):
        for bx in range(nx):
            index = [0] * array.ndim
            index[spatial[0]], index[spatial[1]] = by, bx
            fill, engine = visit((array.name, *index))
            if fill and not engine:
                out.add((by, bx))
    return out


def _skipping(computed: da.Array, skipped: set[tuple[int, int]], fill: Any, name: str) -> da.Array:
    """``computed`` with the blocks ``skipped`` replaced by ``fill``, from tasks with no input:
    Dask culls whatever only they needed."""
    if not skipped:
        return computed
    key = f"{name}-{tokenize(computed.name, sorted(skipped), fill)}"
    trailing = (0,) * (computed.ndim - 2)
    layer: dict = {}
    for bi, rows in enumerate(computed.chunks[0]):
        for bj, cols in enumerate(computed.chunks[1]):
            index = (bi, bj, *trailing)
            if (bi, bj) in skipped:
                shape = (rows, cols, *(c[0] for c in computed.chunks[2:]))
                layer[(key, *index)] = (np.full, shape, fill, computed.dtype)
            else:
                layer[(key, *index)] = (computed.name, *index)
    graph = HighLevelGraph.from_collections(key, layer, dependencies=[computed])
    return da.Array(graph, key, chunks=computed.chunks, dtype=computed.dtype,
                    meta=computed._meta)  # fmt: skip


def local_fskde_dask(
    image: da.Array,
    params: LocalParameters,
    *,
    channel_axis: int | None = None,
    mask: np.ndarray | None = None,
) -> da.Array:
    """Lazy local FS-KDE of a Dask image: ``(y, x[, c])`` → ``(ny, nx, ℓ)`` complex.

    The block core :func:`xfskde.local.local_fskde_block` on :func:`map_haloed`, with the halo
    of the window (:attr:`LocalParameters.depth`).

    Parameters
    ----------
    image : dask.array.Array
        2-D, or 3-D with ``channel_axis``.
    params : LocalParameters
        The kernel, window, stride, boundary and NaN policy of the field.
    channel_axis : int, optional
        The colour axis of a 3-D image (each pixel takes the channel of largest |g|); None
        (the default): a 2-D image.
    mask : numpy.ndarray of bool, optional
        Foreground covering the image's extent, at any resolution (:class:`~xfskde._grid.
        MaskFootprint`): blocks it does not touch are NaN read from nothing (``skip`` of
        :func:`map_haloed`); inside computed blocks, samples outside it are NaN and the
        core's tiles without foreground are not computed. Samples inside are unchanged.

    Returns
    -------
    dask.array.Array
        Same values as the in-memory :func:`xfskde.local_fskde`, whatever the chunking: bit
        for bit for Gaussian windows and cells; for a box (stride below its side) or a disk,
        whose running and prefix sums start at each tile of the core (:mod:`xfskde._core`),
        to the rounding of those float64 sums (complex128 fields: measured up to 5e-15 of the
        field's largest value; complex64 ones round them to float32, which hides it but
        for images whose values span many decades: 1e-18 relative on a few samples of a
        float32 image spanning 16). Its chunks follow the image's, except that
        images in chunks more than :data:`LARGE_CHUNK` × :data:`DEFAULT_CHUNK` on a side are
        cut by :func:`plan_chunks` first (one chunk is one task, on one thread).

    Raises
    ------
    DimensionError
        For an image that is not 2-D without ``channel_axis``, or not 3-D with it.
    """
    ftype = result_float_dtype(image.dtype)
    out_dtype = np.result_type(ftype, np.complex64)
    if channel_axis is None:
        if image.ndim != 2:
            raise DimensionError(
                f"image must be 2-D (y, x) when channel_axis is None, got shape {image.shape}; "
                "pass channel_axis=-1 (or 0) for a colour image"
            )
        src = image[..., None]
    else:
        if image.ndim != 3:
            raise DimensionError(
                f"image must be 3-D with channel_axis={channel_axis}, got {image.shape}"
            )
        src = da.moveaxis(image, channel_axis, -1)
    nan_policy = params.nan_policy

    stride = params.stride
    if oversized(src, DEFAULT_CHUNK):
        # one task is one thread: a single 8192² chunk took 3.8 s where 2048² chunks took 1.6 s
        # on 2 cores (16× on 16)
        rows, cols = plan_chunks(src.shape[:2], halo=params.depth, stride=stride)
        src = src.rechunk((rows, cols, -1))
    footprint = None if mask is None else MaskFootprint(mask, src.shape[:2])

    def block(x: np.ndarray, *, shared: np.ndarray | None = None, **where: Any) -> np.ndarray:
        del where["block_id"]
        x = np.moveaxis(x, -1, 0)  # the core reads (C, h, w): a view
        check_finite(x, nan_policy)
        inside = None
        if shared is not None:
            inside = mask_at_samples(shared, where["image_shape"], stride, where["rows"],
                                     where["cols"])  # fmt: skip
        return local_fskde_block(x, params, out_dtype=out_dtype, threads=1, inside=inside, **where)

    return map_haloed(
        block,
        src,
        halo=params.depth,
        stride=params.stride,
        trailing=(params.length,),
        dtype=out_dtype,
        periodic=params.boundary == "wrap",
        name="xfskde-coefficients",
        token=(params.attrs(), params.scale(), params.profile(), params.half_widths()),
        skip=None if footprint is None else footprint.background,
        fill=np.nan,  # not computed: no value
        shared=None if footprint is None else footprint.mask,
    )
