"""The five tile routines of :mod:`xfskde._core`, each reached by the windows documented for it.

:func:`xfskde._core.fskde_tile` hands every tile to one routine, chosen by
:func:`xfskde._core.tile_path`. Here each routine is called on its own (in place of the
dispatcher, through the very arguments :mod:`xfskde.local` passes) for the windows and strides
documented to use it: it must give the dispatcher's result bit for bit and the brute-force KDE.
test_local.py checks the results of many windows and strides; this file names the routine
behind each.
"""

import numpy as np
import pytest
from _brute_force import local_fskde_reference

import xfskde.local
from xfskde import _core, local_fskde
from xfskde.local import LocalParameters, local_fskde_block, sample_count

#: (window, size, stride, routine): the cases the module docstring of _core documents
CASES = [
    ("box", 8, 8, "cells"),  # HOG-like cells
    ("box", 1, 1, "cells"),  # a one-pixel box shares no row at any stride
    ("box", 3, 5, "cells"),  # cells with gaps between them
    ("gaussian", 0.6, 8, "cells"),  # 7 taps <= stride 8
    ("box", 5, 1, "box_running"),
    ("box", 4, 3, "box_running"),  # strided, still overlapping; an even side
    ("gaussian", 1.3, 1, "separable"),
    ("gaussian", 0.6, 6, "separable_strided"),  # 7 taps > stride 6
    ("gaussian", 3.0, 2, "separable_strided"),  # 25 taps: four at a time, and one alone
    ("disk", 2.5, 1, "disk"),
    ("disk", 1, 8, "disk"),  # no row shared, still the disk routine
]
PARAMS = pytest.mark.parametrize(("window", "size", "stride", "routine"), CASES)


def _run_routine(routine, args):
    """Call one routine with the arguments of ``fskde_tile(*args)``, as the dispatcher does."""
    (src, rowmap, colmap, cval, work, out, oi0, oi1, oj0, oj1, prow0, pcol0, stride,
     _kind, before, after, profile, half_widths, scale, planes) = args  # fmt: skip
    tile = (src, rowmap, colmap, cval, work, out, oi0, oi1, oj0, oj1, prow0, pcol0, stride,
            before, after)  # fmt: skip
    if routine == "cells":
        _core._tile_cells(*tile, profile, scale, planes)
    elif routine == "box_running":
        _core._tile_box_running(*tile, scale, planes)
    elif routine == "separable":
        _core._tile_separable(*tile, profile, scale, planes)
    elif routine == "separable_strided":
        _core._tile_separable_strided(*tile, profile, scale, planes)
    else:
        _core._tile_disk(*tile, half_widths, scale, planes)


@PARAMS
def test_tile_path_names_the_documented_routine(window, size, stride, routine):
    params = LocalParameters(order=2, window=window, size=size, stride=stride)
    n_taps = params.window.before + params.window.after + 1
    assert _core.PATHS[_core.tile_path(params.kind_code(), n_taps, stride)] == routine


@PARAMS
def test_each_routine_alone_gives_the_dispatched_field(monkeypatch, rng, window, size, stride,
                                                       routine):  # fmt: skip
    image = rng.random((19, 23))
    kwargs = {"order": 3, "window": window, "size": size, "stride": stride, "boundary": "mirror"}
    dispatched = local_fskde(image, **kwargs)
    tiles = []

    def only_this_routine(*args):
        tiles.append(args[6:10])
        _run_routine(routine, args)

    monkeypatch.setattr(_core, "fskde_tile", only_this_routine)
    alone = local_fskde(image, **kwargs)
    assert tiles  # local.py went through the routine
    np.testing.assert_array_equal(alone, dispatched)
    expected = local_fskde_reference(image, 3, window, size, stride, "mirror")
    np.testing.assert_allclose(alone, expected, rtol=0, atol=1e-12)


@PARAMS
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_where_a_tile_starts(rng, window, size, stride, routine, dtype):
    """Cells and Gaussian samples do not depend on where their tile starts; running sums (box)
    and prefix sums (disk) start with the tile, and differ only at float64 rounding."""
    image = rng.random((40, 44)).astype(dtype)
    params = LocalParameters(order=4, window=window, size=size, stride=stride)
    ny, nx = sample_count(40, stride), sample_count(44, stride)
    out_dtype = np.complex64 if dtype == np.float32 else np.complex128
    block = {"image_shape": image.shape, "out_dtype": out_dtype}
    whole = local_fskde_block(image[None], params, rows=(0, ny), cols=(0, nx), **block)
    i0, j0 = ny // 3, nx // 2  # a tile that starts inside the image
    part = local_fskde_block(image[None], params, rows=(i0, ny), cols=(j0, nx), **block)
    if routine in ("cells", "separable", "separable_strided"):
        np.testing.assert_array_equal(part, whole[i0:, j0:])
    else:
        scale = float(np.abs(whole).max())
        atol = (1e-6 if dtype == np.float32 else 1e-13) * scale
        np.testing.assert_allclose(part, whole[i0:, j0:], rtol=0, atol=atol)


# ------------------------------------------------------------------------- tiles of the core


def _tiles(window, size, stride, shape=(2048, 2048)):
    """The window's taps and its tiles' (rows, columns) in samples, as local.py sizes them for
    a float32 image at K = 8."""
    params = LocalParameters(order=8, window=window, size=size, stride=stride)
    n_taps = params.window.before + params.window.after + 1
    path = _core.tile_path(params.kind_code(), n_taps, stride)
    rows, cols = xfskde.local._tile_shape(path, n_taps, stride, params.length, 4)
    return n_taps, rows, cols


def test_narrow_windows_keep_cache_sized_tiles():
    """A box of 15 holds 16 phasor rows of 9 complex float32 planes (1152 bytes a column): as
    many columns as fit 512 KiB, 256 rows."""
    assert _tiles("box", 15, 1)[1:] == (256, (1 << 19) // 1152)
    assert _tiles("box", 8, 8)[1:] == (32, 1024 // 8)  # cells hold one row: the widest tiles


@pytest.mark.parametrize(("size", "stride"), [(17.6, 1), (17.6, 4), (60, 15), (121.8, 30)])
def test_wide_windows_get_tiles_several_windows_across(size, stride):
    """A tile reads the window around its samples: a wide window's tiles are four windows tall
    and are widened beyond the cache-sized width towards four windows (up to 1024 columns) as
    far as 32 MiB of held rows allow, so that the rows read twice are a minority."""
    n_taps, rows, cols = _tiles("gaussian", size, stride)
    assert rows * stride >= 4 * n_taps
    width = cols * stride
    assert width >= min(4 * n_taps, 1024 - stride)
    held = -(-n_taps // stride) + 4 if stride > 1 else n_taps + stride
    assert held * 9 * 2 * 4 * (width + n_taps) <= 1 << 25


def test_a_wide_strided_window_is_the_brute_force_kde(rng):
    """σ = 12 at stride 5 (97 taps, 20 open sums): the strided routine with widened tiles, and
    with tiles of 64 columns and as few rows as the rule allows, against the brute force."""
    image = rng.random((130, 150))
    kwargs = {"order": 4, "window": "gaussian", "size": 12.0, "stride": 5, "boundary": "reflect"}
    expected = local_fskde_reference(image, 4, "gaussian", 12.0, 5, "reflect")
    wide = local_fskde(image, **kwargs)
    np.testing.assert_allclose(wide, expected, rtol=0, atol=1e-12)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(xfskde.local, "CACHE_BYTES", 1)
        mp.setattr(xfskde.local, "RING_BYTES", 1)
        mp.setattr(xfskde.local, "HALO_SHARE", 0)
        mp.setattr(xfskde.local, "TILE_ROWS", 16)
        narrow = local_fskde(image, **kwargs)
    np.testing.assert_array_equal(narrow, wide)
