"""The working store of an OME-TIFF output: an interrupt removes it and says so, naming it
(a run killed outright leaves it, to be deleted or replaced by the next run); a leftover of a
killed run is replaced by the next write of the same file."""

from __future__ import annotations

import numpy as np
import pytest
import tifffile
import xarray as xr

from xfskde.io import write_ome_tiff
from xfskde.io.ometiff import temporary_ome_zarr


def test_an_interrupt_removes_the_working_store_and_names_it(tmp_path):
    target = tmp_path / "maps.ome.tif"
    with pytest.raises(KeyboardInterrupt) as caught, temporary_ome_zarr(target) as store:
        (store / "0").mkdir(parents=True)  # half a store, as a run stopped while writing
        raise KeyboardInterrupt
    assert store == tmp_path / ".maps.ome.tif.ome.zarr" and not store.exists()
    notes = getattr(caught.value, "__notes__", [])
    assert notes == [
        f"the working store of maps.ome.tif, {store}, was removed (a run killed outright, "
        "kill -9 or a power cut, leaves it: delete it, or the next run replaces it)"
    ]


def test_a_killed_runs_leftovers_are_replaced(tmp_path):
    target = tmp_path / "maps.ome.tif"
    leftover = tmp_path / ".maps.ome.tif.ome.zarr"
    (leftover / "0").mkdir(parents=True)
    (leftover / "0" / "stale").write_bytes(b"\0" * 16)
    (tmp_path / "maps.ome.tif.partial").write_bytes(b"II*\0")
    maps = xr.DataArray(np.arange(64.0).reshape(8, 8), dims=("y", "x"), name="energy")
    write_ome_tiff(maps, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["maps.ome.tif"]
    np.testing.assert_array_equal(tifffile.imread(target), maps.values)
