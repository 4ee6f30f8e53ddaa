"""Georeferenced images: a GeoTIFF in, 80 m cells with the right grid and nodata, GeoTIFFs out.

Needs the geo extra (``pip install "xfskde[geo]"``: rioxarray). The script

1. writes a small Sentinel-2-like scene with rioxarray: uint16, 10 m pixels in UTM zone 32N,
   fields of stripes in four directions, nodata 0 on a border (the edge of the swath);
2. opens it with ``xfskde.open_image`` (CRS, coordinates and nodata kept) and computes the
   FS-KDE of every 8×8 cell (``window="box", size=8, stride=8``): 80 m cells whose
   GeoTransform, resolution and bounds rioxarray reads back, the image's footprint exactly;
3. compares the cells beside the nodata border with ``nodata=None`` (the 0s used as data) and
   with the default (read from the file, omitted as NaN): |F_0| against the interior's; the
   cells on nodata pixels are NaN (no value);
4. writes the coefficients (Re/Im bands) and the orientation and coherence maps as COGs with
   ``xfskde.io.geotiff.write_geotiff``, reads them back with rioxarray and reprojects the
   coherence to WGS 84;
5. writes the scene as four named bands (``B02``, ``B03``, ``B04``, ``B08``: GDAL band
   descriptions) of reflectance stored × 10 000 (GDAL scale 0.0001), and again with its bands
   in another order: ``xfskde maps`` gives the energy in reflectance per pixel, ``xfskde
   segment --channels B08,B04`` segments two of the bands by name, and ``--model`` labels the
   reordered scene with its bands put back in the model's order;
6. writes each texture's fraction of every pixel as a band (``--abundances``);
7. draws an area of interest as a GeoJSON polygon in WGS 84 longitude and latitude (as GIS
   tools export one) and segments only inside it (``--mask aoi.geojson``): the polygon is
   transformed to the scene's UTM grid and drawn by pixel centres, as GDAL's rasterize draws it;
8. writes bands B08 and B04 as Sentinel-2 writes them, lossless JPEG 2000 files, stacks them
   with a VRT (as ``gdalbuildvrt -separate`` does) and a scene classification at 20 m (class 4,
   vegetation, on the top half; 8, cloud, below) as a third JPEG 2000: ``xfskde segment
   stack.vrt --model labels.tif --mask scl.jp2 --mask-classes 4`` labels the vegetation only,
   as the GeoTIFF's bands were labelled.

    python examples/geospatial.py [--size 256] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np
import xarray as xr

import xfskde
from xfskde.segmentation import read_model
from xfskde.segmentation.features import feature_depth

PIXEL = 10.0  # metres
CORNER = (300000.0, 5000000.0)  # west, north, UTM zone 32N
CRS = "EPSG:32632"
BORDER = 24  # pixels of nodata on the left and at the bottom


def scene(size: int) -> np.ndarray:
    """Four fields of stripes (periods 6–12 px, four directions), DN 1500 ± 60, nodata 0."""
    y, x = np.mgrid[0:size, 0:size].astype(np.float64)
    image = np.full((size, size), 1500.0)
    half = size // 2
    for (r, c), (degrees, period) in zip(
        [(0, 0), (0, half), (half, 0), (half, half)],
        [(0, 8), (45, 6), (90, 12), (135, 10)],
        strict=True,
    ):
        a = np.deg2rad(degrees)
        field = np.s_[r : r + half, c : c + half]
        image[field] += 60 * np.cos(2 * np.pi * (x * np.cos(a) + y * np.sin(a))[field] / period)
    noise = np.random.default_rng(0).normal(0, 10, image.shape)
    pixels = np.clip(image + noise, 1, 65535).astype(np.uint16)
    pixels[:, :BORDER] = 0
    pixels[-BORDER:, :] = 0
    return pixels


def write_scene(path: Path, size: int) -> None:
    x = CORNER[0] + (np.arange(size) + 0.5) * PIXEL
    y = CORNER[1] - (np.arange(size) + 0.5) * PIXEL
    image = xr.DataArray(scene(size), dims=("y", "x"), coords={"y": y, "x": x}, name="B04")
    image = image.rio.write_crs(CRS).rio.write_nodata(0)
    image.rio.write_transform(image.rio.transform(recalc=True), inplace=True)
    image.rio.to_raster(path, tiled=True, blockxsize=64, blockysize=64, compress="deflate")


BANDS = {"B02": 0.3, "B03": 0.45, "B04": 0.4, "B08": 1.6}  # each band's gain on the scene


def write_bands(path: Path, size: int, names: tuple[str, ...]) -> None:
    """The scene as bands ``names`` of reflectance (its DN over 10 000 times each band's gain),
    stored as integers × 10 000 with a GDAL scale of 0.0001, each band described by its name."""
    pixels = scene(size).astype(np.float64)
    stored = np.stack([np.round(pixels * BANDS[name]) for name in names]).astype(np.uint16)
    x = CORNER[0] + (np.arange(size) + 0.5) * PIXEL
    y = CORNER[1] - (np.arange(size) + 0.5) * PIXEL
    bands = xr.DataArray(stored, dims=("band", "y", "x"),
                         coords={"band": np.arange(1, len(names) + 1), "y": y, "x": x})  # fmt: skip
    bands = bands.rio.write_crs(CRS).rio.write_nodata(0)
    bands.attrs.update(scale_factor=1e-4, add_offset=0.0, long_name=tuple(names))
    bands.rio.to_raster(path, tiled=True, blockxsize=64, blockysize=64)


def write_vrt(path: Path, sources: list[str], size: int) -> None:
    """A VRT stacking one-band files as its bands, named by their files' stems after the last
    ``_`` (``T32TQM_B08.jp2`` -> ``B08``), paths relative to it: what ``gdalbuildvrt
    -separate`` writes."""
    from pyproj import CRS as ProjCRS

    bands = "".join(
        f'  <VRTRasterBand dataType="UInt16" band="{i}">'
        f"<Description>{Path(source).stem.rsplit('_', 1)[-1]}</Description>"
        f"<NoDataValue>0</NoDataValue><SimpleSource>"
        f'<SourceFilename relativeToVRT="1">{source}</SourceFilename><SourceBand>1</SourceBand>'
        f"</SimpleSource></VRTRasterBand>\n"
        for i, source in enumerate(sources, 1)
    )
    path.write_text(
        f'<VRTDataset rasterXSize="{size}" rasterYSize="{size}">\n'
        f"  <SRS>{ProjCRS.from_user_input(CRS).to_wkt()}</SRS>\n"
        f"  <GeoTransform>{CORNER[0]}, {PIXEL}, 0, {CORNER[1]}, 0, {-PIXEL}</GeoTransform>\n"
        f"{bands}</VRTDataset>\n"
    )


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256, help="side in pixels (default 256)")
    parser.add_argument("--out", type=Path, default=None, help="keep the files in this folder")
    args = parser.parse_args(argv)
    if not 128 <= args.size <= 4096 or args.size % 64:
        parser.error("--size must be a multiple of 64 between 128 and 4096")
    try:
        import rioxarray
    except ImportError:
        print('rioxarray is not installed: pip install "xfskde[geo]" to run this example')
        return {}
    from xfskde.io.geotiff import write_geotiff

    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.out or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "scene.tif"
        write_scene(path, args.size)

        # 2. open: CRS, coordinates in metres, nodata — and 80 m cells with their own grid
        image = xfskde.open_image(path, chunks=128)
        print(f"{path.name}: {dict(image.sizes)} {image.dtype}, {image.rio.crs}, "
              f"{image.rio.resolution()[0]:g} m, nodata {image.rio.nodata}")  # fmt: skip
        cells = xfskde.local_fskde(image, order=8, window="box", size=8, stride=8)
        print(f"cells: {dict(cells.sizes)}, {cells.rio.resolution()[0]:g} m, "
              f"bounds {cells.rio.bounds()} (image {image.rio.bounds()})")  # fmt: skip
        results["cell_metres"] = float(cells.rio.resolution()[0])
        results["bounds_error_metres"] = float(
            np.max(np.abs(np.subtract(cells.rio.bounds(), image.rio.bounds())))
        )

        # 3. the nodata border: the 0s as data, then omitted (the default reads the file's nodata)
        f0 = np.abs(cells.isel(k=0).values)
        used = np.abs(xfskde.local_fskde(image, order=8, window="box", size=8, stride=8,
                                         nodata=None).isel(k=0).values)  # fmt: skip
        edge, inner = BORDER // 8, np.s_[: args.size // 16, BORDER // 8 + 1 :]
        rows = np.s_[: args.size // 16]
        interior = f0[inner].mean()
        results["edge_ratio_nodata_as_data"] = float(used[rows, edge].mean() / interior)
        results["edge_ratio_nodata_omitted"] = float(f0[rows, edge].mean() / interior)
        source = f"{cells.attrs['input_nodata']} from {cells.attrs['input_nodata_source']}"
        print(
            f"|F_0| of the cells at the nodata edge / the interior's: "
            f"{results['edge_ratio_nodata_as_data']:.1f} with the 0s as data, "
            f"{results['edge_ratio_nodata_omitted']:.2f} with them omitted (nodata {source})"
        )

        # 4. GeoTIFFs out: coefficients as Re/Im bands, maps as float32, all as COGs
        orientation = cells.fskde.orientation()
        coherence = cells.fskde.coherence()
        write_geotiff(cells, folder / "cells.tif", cog=True)
        write_geotiff(orientation, folder / "orientation.tif", cog=True)
        write_geotiff(coherence, folder / "coherence.tif", cog=True)
        bands = rioxarray.open_rasterio(folder / "cells.tif")
        back = np.moveaxis(bands.values[0::2] + 1j * bands.values[1::2], 0, -1)
        # the cells on nodata are NaN (no value) in both: QGIS shows them as nodata
        results["geotiff_max_error"] = float(np.nanmax(np.abs(back - cells.values)))
        results["geotiff_same_nodata"] = float(
            np.array_equal(np.isnan(back), np.isnan(cells.values))
        )
        results["geotiff_same_transform"] = float(bands.rio.transform() == cells.rio.transform())
        print(f"cells.tif: {bands.sizes['band']} bands ({bands.attrs['long_name'][:2]} ...), "
              f"max |error| {results['geotiff_max_error']:.1g}, same transform: "
              f"{bool(results['geotiff_same_transform'])}")  # fmt: skip
        read = rioxarray.open_rasterio(folder / "coherence.tif").squeeze("band", drop=True)
        wgs84 = read.rio.reproject("EPSG:4326")
        west, south, east, north = wgs84.rio.bounds()
        print(f"coherence.tif in WGS 84: {west:.5f}..{east:.5f} E, {south:.5f}..{north:.5f} N")
        # the fields of stripes: one orientation each, coherent
        quarter = args.size // 16  # cells per field side
        field_cells = orientation.values[: quarter // 2 + 1, edge + 1 : quarter]
        results["stripes_coherence"] = float(np.median(coherence.values[:quarter, edge + 1 :]))
        print(
            f"median coherence of the striped fields: {results['stripes_coherence']:.2f}; "
            f"orientation of the first field: {np.rad2deg(np.median(field_cells)):.1f}°"
        )

        # 5. named bands of reflectance: the energy in reflectance, bands picked by name
        from xfskde.cli import main as xfskde_command

        write_bands(folder / "bands.tif", args.size, ("B02", "B03", "B04", "B08"))
        write_bands(folder / "reordered.tif", args.size, ("B08", "B04", "B03", "B02"))
        quiet = ["--no-progress", "--overwrite"]
        xfskde_command(["maps", str(folder / "bands.tif"), str(folder / "band-maps.tif"),
                        "--window", "box", "--size", "8", "--stride", "8", *quiet])  # fmt: skip
        energy = rioxarray.open_rasterio(folder / "band-maps.tif").values[2]
        results["energy_reflectance_per_pixel"] = float(np.nanmedian(energy[: args.size // 16]))
        print(f"energy of the striped fields: {results['energy_reflectance_per_pixel']:.4f} "
              "reflectance per pixel (the bands' largest gradient, decoded)")  # fmt: skip
        xfskde_command(["segment", str(folder / "bands.tif"), str(folder / "labels.tif"),
                        "--textures", "4", "--channels", "B08,B04", *quiet])  # fmt: skip
        xfskde_command(["segment", str(folder / "reordered.tif"), str(folder / "again.tif"),
                        "--model", str(folder / "labels.tif"), *quiet])  # fmt: skip
        first = rioxarray.open_rasterio(folder / "labels.tif")
        again = rioxarray.open_rasterio(folder / "again.tif")
        results["reordered_same_labels"] = float(np.mean(first.values == again.values))
        print(f"labels of B08, B04 (of {first.attrs['source_channels']}); the reordered scene "
              f"({again.attrs['channels_selected']}) labelled alike at "
              f"{results['reordered_same_labels']:.1%} of its pixels")  # fmt: skip
        # 6. the fraction maps: each texture's share, a band each, their arg-max the labels
        xfskde_command(["segment", str(folder / "bands.tif"), str(folder / "fractions.tif"),
                        "--model", str(folder / "labels.tif"), "--abundances", *quiet])  # fmt: skip
        fractions = rioxarray.open_rasterio(folder / "fractions.tif")
        shares = fractions.values
        present = ~np.isnan(shares).any(axis=0)
        results["fractions_sum_error"] = float(np.abs(shares[:, present].sum(axis=0) - 1).max())
        results["fractions_argmax_is_labels"] = float(
            np.mean(shares[:, present].argmax(axis=0) + 1 == first.values[0][present])
        )
        print(f"fractions.tif: bands {fractions.attrs['long_name']}, summing to 1 within "
              f"{results['fractions_sum_error']:.0e}; their arg-max is the labels at "
              f"{results['fractions_argmax_is_labels']:.1%} of the pixels")  # fmt: skip
        # 7. an area of interest drawn in WGS 84 (RFC 7946): labels inside it only
        from pyproj import Transformer

        to_wgs84 = Transformer.from_crs(CRS, "EPSG:4326", always_xy=True).transform
        west, north = CORNER[0] + 40 * PIXEL, CORNER[1] - 20 * PIXEL
        east, south = west + (args.size // 2) * PIXEL, north - (args.size // 2) * PIXEL
        corners = [(west, north), (east, north), (east, south), (west, south), (west, north)]
        aoi = {"type": "Polygon", "coordinates": [[list(to_wgs84(x, y)) for x, y in corners]]}
        (folder / "aoi.geojson").write_text(json.dumps(aoi))
        xfskde_command(["segment", str(folder / "bands.tif"), str(folder / "aoi-labels.tif"),
                        "--model", str(folder / "labels.tif"), "--mask",
                        str(folder / "aoi.geojson"), *quiet])  # fmt: skip
        inside = rioxarray.open_rasterio(folder / "aoi-labels.tif").values[0] > 0
        results["aoi_share"] = float(inside.mean())
        results["aoi_square"] = float((args.size // 2) ** 2 / args.size**2)
        side = args.size // 2
        print(f"aoi-labels.tif: labels inside the area of interest only, {inside.mean():.2%} "
              f"of the scene (its {side}² pixels: {results['aoi_square']:.2%})")  # fmt: skip
        # 8. Sentinel-2's JPEG 2000 bands stacked by a VRT, masked by a scene classification
        stored = rioxarray.open_rasterio(folder / "bands.tif", mask_and_scale=False)
        for name in ("B08", "B04"):
            band = stored.isel(band=list(stored.attrs["long_name"]).index(name))
            band.attrs = {"long_name": name, "_FillValue": 0}
            band.rio.to_raster(folder / f"T32TQM_{name}.jp2", driver="JP2OpenJPEG",
                               QUALITY=100, REVERSIBLE="YES")  # fmt: skip
        write_vrt(folder / "stack.vrt", ["T32TQM_B08.jp2", "T32TQM_B04.jp2"], args.size)
        half = args.size // 2  # the classification at 20 m: 4 (vegetation) above, 8 below
        classes = np.where(np.arange(half)[:, None] < half // 2, 4, 8).repeat(half, 1)
        scl = xr.DataArray(classes.astype(np.uint8), dims=("y", "x"), coords={
            "y": CORNER[1] - (np.arange(half) + 0.5) * 2 * PIXEL,
            "x": CORNER[0] + (np.arange(half) + 0.5) * 2 * PIXEL})  # fmt: skip
        scl.rio.write_crs(CRS).rio.to_raster(folder / "scl.jp2", driver="JP2OpenJPEG",
                                             QUALITY=100, REVERSIBLE="YES")  # fmt: skip
        xfskde_command(["segment", str(folder / "stack.vrt"), str(folder / "vrt-labels.tif"),
                        "--model", str(folder / "labels.tif"), "--mask", str(folder / "scl.jp2"),
                        "--mask-classes", "4", *quiet])  # fmt: skip
        vegetation = rioxarray.open_rasterio(folder / "vrt-labels.tif").values[0]
        results["vrt_labels_outside_class"] = float((vegetation[args.size // 2 :] > 0).mean())
        # farther from the class's edge than a pixel's features read (the window's radius and
        # the filters' reach: the halo of the model's features)
        reach = feature_depth(read_model(folder / "labels.tif").spec)
        away = np.s_[: max(1, args.size // 2 - reach)]
        same = vegetation[away] == first.values[0][away]
        results["vrt_same_labels_inside"] = float(same.mean())
        print(f"vrt-labels.tif: the JPEG 2000 bands stacked by stack.vrt, labelled inside "
              f"class 4 of scl.jp2 only, as bands.tif was at "
              f"{results['vrt_same_labels_inside']:.1%} of the pixels away from its edge; "
              f"{results['vrt_labels_outside_class']:.1%} labelled outside")  # fmt: skip
        if args.out:
            print(f"files in {folder}: " + ", ".join(sorted(p.name for p in folder.glob("*.tif"))))
    return results


if __name__ == "__main__":
    main()
