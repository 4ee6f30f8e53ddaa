"""Masks drawn as polygons (:mod:`xfskde.io.geojson`): QuPath's regions on a slide, an area of
interest on a scene — placed in the right frame, drawn by pixel centres as GDAL draws them,
and refused where the frame cannot be told."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
import tifffile
import xarray as xr
import zarr

import xfskde
from xfskde.cli import main
from xfskde.exceptions import ParameterError
from xfskde.io.geojson import polygon_mask
from xfskde.masks import resolve_mask

#: QuPath's export of two annotations (a square with a square hole; a MultiPolygon) and a
#: detection's centroid, in level-0 pixels: 800² − 200² + 400 × 200 = 680 000 of them inside.
REGIONS = {
    "type": "FeatureCollection",
    "features": [
        {"type": "Feature", "properties": {"classification": {"name": "Tumor"}},
         "geometry": {"type": "Polygon", "coordinates": [
             [[100, 200], [900, 200], [900, 1000], [100, 1000], [100, 200]],
             [[300, 400], [500, 400], [500, 600], [300, 600], [300, 400]]]}},
        {"type": "Feature", "properties": {},
         "geometry": {"type": "MultiPolygon", "coordinates": [
             [[[1200, 1200], [1600, 1200], [1600, 1400], [1200, 1400], [1200, 1200]]]]}},
        {"type": "Feature", "properties": {}, "geometry": {"type": "Point", "coordinates": [5, 5]}},
    ],
}  # fmt: skip
INSIDE = 800 * 800 - 200 * 200 + 400 * 200


def _expected(shape: tuple[int, int], factor: int = 1) -> np.ndarray:
    """REGIONS drawn by hand on the pixels of level 0 over ``factor`` (pixel centres)."""
    mask = np.zeros(shape, bool)
    for top, bottom, left, right in [(200, 1000, 100, 900), (1200, 1400, 1200, 1600)]:
        mask[top // factor : bottom // factor, left // factor : right // factor] = True
    mask[400 // factor : 600 // factor, 300 // factor : 500 // factor] = False
    return mask


def _utm_scene(tmp_path, side: int) -> tuple[xr.DataArray, xr.DataArray]:
    """A side² GeoTIFF of 10 m pixels in UTM zone 33N (rioxarray writes it), and the image
    xfskde opens of it."""
    scene = xr.DataArray(
        np.zeros((1, side, side), np.uint8), dims=("band", "y", "x"),
        coords={"band": [1], "y": 500_000 - 10.0 * np.arange(side) - 5,
                "x": 300_000 + 10.0 * np.arange(side) + 5},
    ).rio.write_crs("EPSG:32633")  # fmt: skip
    scene.rio.to_raster(tmp_path / "scene.tif")
    return scene, xfskde.open_image(tmp_path / "scene.tif")


@pytest.fixture(scope="module")
def slides(tmp_path_factory):
    """A 2048² pyramid (levels of 2048 and 1024) with 0.5 µm pixels, and one recording none."""
    folder = tmp_path_factory.mktemp("slides")
    image = np.random.default_rng(0).integers(0, 255, (2048, 2048, 3), np.uint8)
    options = {"tile": (256, 256), "photometric": "rgb"}
    paths = {}
    for name, metadata in [("sized.ome.tif", {"PhysicalSizeX": 0.5, "PhysicalSizeY": 0.5}),
                           ("unsized.tif", None)]:  # fmt: skip
        paths[name] = folder / name
        with tifffile.TiffWriter(paths[name], ome=metadata is not None) as tif:
            tif.write(
                image, subifds=1, metadata=metadata and {"axes": "YXS", **metadata}, **options
            )
            tif.write(image[::2, ::2], subfiletype=1, **options)
    (folder / "regions.geojson").write_text(json.dumps(REGIONS))
    return paths["sized.ome.tif"], paths["unsized.tif"], folder / "regions.geojson"


def test_qupath_regions_are_drawn_on_every_level_and_crop(slides, capsys):
    """Level-0 pixels, x the column: the same regions on level 0, on level 1 (a quarter of the
    pixels), on a crop of level 0 (placed by its µm coords) and on level 1 of a file without a
    pixel size (placed by the ratio of the sides); a crop of that one cannot be placed."""
    sized, unsized, regions = slides
    level0 = resolve_mask(str(regions), xfskde.open_image(sized))
    np.testing.assert_array_equal(level0.values, _expected((2048, 2048)))
    assert level0.attrs["polygons"] == 2 and level0.attrs["source"] == str(regions)
    assert "source_version" in level0.attrs  # a resumed write sees the mask change
    for path in (sized, unsized):
        level1 = resolve_mask(str(regions), xfskde.open_image(path, level=1))
        np.testing.assert_array_equal(level1.values, _expected((1024, 1024), factor=2))
    crop = xfskde.open_image(sized).isel(y=slice(150, 1150), x=slice(50, 1050))
    cut = resolve_mask(REGIONS, crop)
    np.testing.assert_array_equal(cut.values, _expected((2048, 2048))[150:1150, 50:1050])
    with pytest.raises(ParameterError, match="records no pixel size: give the mask for the whole"):
        resolve_mask(REGIONS, xfskde.open_image(unsized, level=1).isel(y=slice(0, 500)))
    array = resolve_mask(REGIONS, xr.DataArray(np.zeros((2048, 2048)), dims=("y", "x")))
    np.testing.assert_array_equal(array.values, _expected((2048, 2048)))  # its own pixels
    listed = regions.with_name("listed.geojson")  # QuPath's export without "FeatureCollection"
    listed.write_text(json.dumps(REGIONS["features"]))
    np.testing.assert_array_equal(resolve_mask(str(listed), xfskde.open_image(sized)).values,
                                  level0.values)  # fmt: skip
    for path in (regions, listed):  # xfskde info read a list export with a parser of its own
        assert main(["info", str(path)]) == 0
    assert capsys.readouterr().out.count("features    3: Tumor (Polygon), unclassified") == 2
    with pytest.raises(xfskde.exceptions.DimensionError, match=r"got an xarray\.Dataset"):
        resolve_mask(xr.Dataset({"m": (("y", "x"), np.ones((4, 4)))}), array)  # not GeoJSON


def test_a_mask_beyond_max_side_is_the_image_at_one_scale(slides):
    _, unsized, _ = slides
    image = xfskde.open_image(unsized)
    mask = polygon_mask(REGIONS, image, max_side=512)
    assert mask.shape == (512, 512) and mask.attrs["downsampled_by"] == 4
    np.testing.assert_array_equal(mask.values, _expected((512, 512), factor=4))


def test_segment_and_coefficients_take_qupath_regions(slides, tmp_path, capsys):
    """``--mask regions.geojson``: nothing labelled or computed outside the regions, at the
    level ``--mpp`` reads too; the store records the mask and its version."""
    sized, _, regions = slides
    labels = tmp_path / "labels.zarr"
    argv = ["segment", str(sized), str(labels), "--textures", "2", "--mask", str(regions),
            "--mpp", "1", "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    values = zarr.open_group(labels)["labels"][:]
    outside = ~_expected((1024, 1024), factor=2)
    assert values.shape == (1024, 1024) and not values[outside].any()
    assert values[~outside].all()
    store = tmp_path / "field.zarr"
    argv = ["coefficients", str(sized), str(store), "--mask", str(regions), "--stride", "8",
            "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    field = xfskde.open_coefficients(store)
    assert field.attrs["mask"] == str(regions) and "mask_version" in field.attrs
    assert np.isnan(field.values[0, 0]).all() and np.isfinite(field.values[80, 80]).all()


def test_an_area_of_interest_on_a_scene_as_gdal_draws_it(tmp_path):
    """A GeoTIFF in UTM: a GeoJSON naming that CRS placed by the image's coords, one in WGS 84
    (RFC 7946's default) transformed first — each pixel as GDAL's rasterize draws the same
    polygon (pixel centres, rasterio) — whichever way the y coords run; a GeoDataFrame-like
    object's crs read; UTM numbers read as WGS 84, and a CRS on an image without one, refused."""
    rioxarray = pytest.importorskip("rioxarray")
    from pyproj import Transformer
    from rasterio.features import rasterize

    del rioxarray
    side = 512
    scene, image = _utm_scene(tmp_path, side)
    ring = [[301_000, 499_000], [304_003, 498_500], [303_000, 495_007], [301_000, 499_000]]
    utm = {"type": "Feature", "properties": {},
           "crs": {"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::32633"}},
           "geometry": {"type": "Polygon", "coordinates": [ring]}}  # fmt: skip
    gdal = rasterize([utm["geometry"]], out_shape=(side, side), transform=scene.rio.transform())
    np.testing.assert_array_equal(resolve_mask(utm, image).values, gdal.astype(bool))
    flipped = resolve_mask(utm, image.isel(y=slice(None, None, -1)))
    np.testing.assert_array_equal(flipped.values, gdal[::-1].astype(bool))
    to_wgs84 = Transformer.from_crs("EPSG:32633", "EPSG:4326", always_xy=True).transform
    lonlat = [list(to_wgs84(x, y)) for x, y in ring]
    (tmp_path / "aoi.geojson").write_text(json.dumps({"type": "Polygon", "coordinates": [lonlat]}))
    drawn = resolve_mask(str(tmp_path / "aoi.geojson"), image).values
    assert np.count_nonzero(drawn != gdal.astype(bool)) <= 0.002 * gdal.sum()  # straight in UTM

    class Frame:  # what a GeoDataFrame offers: __geo_interface__ and a pyproj crs
        def __init__(self) -> None:
            feature = {"type": "Feature", "properties": {}, "geometry": utm["geometry"]}
            self.__geo_interface__ = {"type": "FeatureCollection", "features": [feature]}
            self.crs = scene.rio.crs  # rasterio's CRS has to_wkt(), as pyproj's

    np.testing.assert_array_equal(resolve_mask(Frame(), image).values, gdal.astype(bool))
    with pytest.raises(ParameterError, match="WGS 84 longitude and latitude") as refused:
        resolve_mask({"type": "Polygon", "coordinates": [ring]}, image)
    assert "the regions span x 301000 to 304003, y 495007 to 499000 in WGS 84" in str(refused.value)
    # regions in the image's CRS that miss it: where each lies, each CRS by its short name
    # (the refusal held the CRS's whole WKT, and said "as the GeoJSON's crs says")
    away = [[x + 100_000, y] for x, y in ring]
    with pytest.raises(ParameterError, match="lie outside the image") as refused:
        resolve_mask({**utm, "geometry": {"type": "Polygon", "coordinates": [away]}}, image)
    said = str(refused.value)
    assert "the regions span x 401000 to 404003, y 495007 to 499000 in EPSG:32633" in said
    assert "the image x " in said and "PROJCRS" not in said and len(said) < 500
    with pytest.raises(ParameterError, match=r"is in a CRS .* and the image has none"):
        resolve_mask(utm, xr.DataArray(np.zeros((64, 64)), dims=("y", "x")))


def test_geojson_without_regions_or_not_geojson_is_refused(tmp_path):
    image = xr.DataArray(np.zeros((64, 64)), dims=("y", "x"))
    with pytest.raises(ParameterError, match="holds no Polygon or MultiPolygon"):
        resolve_mask({"type": "Point", "coordinates": [1, 2]}, image)
    with pytest.raises(ParameterError, match="not GeoJSON"):
        resolve_mask({"features": []}, image)
    (tmp_path / "notes.json").write_text("not json")
    with pytest.raises(ParameterError, match="is not GeoJSON"):
        resolve_mask(str(tmp_path / "notes.json"), image)
    with pytest.raises(ParameterError, match="lie outside the image"):
        resolve_mask({"type": "Polygon", "coordinates": [[[100, 100], [200, 100], [200, 200]]]},
                     image)  # fmt: skip


def test_an_array_image_is_its_own_pixels_and_anything_else_is_refused():
    """polygon_mask of a NumPy image, grey or RGB, draws what it draws on a DataArray of the
    same shape without a file (the vertices its pixels); a list is refused in one line."""
    triangle = {"type": "Polygon", "coordinates": [[[20, 40], [300, 40], [300, 200], [20, 40]]]}
    drawn = polygon_mask(triangle, xr.DataArray(np.zeros((512, 768)), dims=("y", "x")))
    for image in (np.zeros((512, 768), np.float32), np.zeros((512, 768, 3), np.uint8)):
        mask = polygon_mask(triangle, image)
        assert mask.dims == ("y", "x") and np.array_equal(mask.values, drawn.values)
    assert 0 < int(drawn.sum()) < 300 * 160
    with pytest.raises(ParameterError, match=r"needs the image as a DataArray .* got list$"):
        polygon_mask(triangle, [[0, 1], [1, 0]])


def test_regions_classified_ignore_are_cut_out():
    """QuPath's ``Ignore*`` class marks what an analysis leaves out (a fold, a pen mark): such
    a region, drawn over an annotation, was foreground like the rest; it is cut out now, and
    a GeoJSON of nothing else is refused."""
    fold = {"type": "Feature", "properties": {"classification": {"name": "Ignore*"}},
            "geometry": {"type": "Polygon", "coordinates": [
                [[600, 700], [800, 700], [800, 900], [600, 900], [600, 700]]]}}  # fmt: skip
    image = xr.DataArray(np.zeros((2048, 2048)), dims=("y", "x"))
    mask = resolve_mask({**REGIONS, "features": [fold, *REGIONS["features"]]}, image)
    expected = _expected((2048, 2048))
    expected[700:900, 600:800] = False
    np.testing.assert_array_equal(mask.values, expected)
    assert mask.attrs["polygons"] == 2  # the fold is no region
    with pytest.raises(ParameterError, match=r"but those classified Ignore\*"):
        resolve_mask({"type": "FeatureCollection", "features": [fold]}, image)


def test_a_gis_s_vector_files_draw_as_gdal_does(tmp_path, capsys, monkeypatch):
    """An area of interest kept as a shapefile (with its .prj, in UTM), a GeoPackage and KML
    (WGS 84) or FlatGeobuf, read by geopandas with their CRS: each drawn on a UTM scene as
    GDAL's rasterize draws the polygon (exactly in its own CRS, within 0.2 % from WGS 84); a
    GeoDataFrame in Python alike; ``xfskde info`` names the format and the CRS. Refused with
    the way in: a file of several layers, one at a URL, and any without geopandas."""
    gpd = pytest.importorskip("geopandas")
    pytest.importorskip("rioxarray")
    from rasterio.features import rasterize
    from shapely.geometry import Polygon

    side = 256
    scene, image = _utm_scene(tmp_path, side)
    ring = [(300_500, 499_000), (302_003, 498_600), (301_000, 497_907)]
    gdal = rasterize([Polygon(ring)], out_shape=(side, side), transform=scene.rio.transform())
    assert gdal.sum() > 5000
    frame = gpd.GeoDataFrame({"name": ["aoi"]}, geometry=[Polygon(ring)], crs="EPSG:32633")
    frame.to_file(tmp_path / "aoi.shp")
    frame.to_file(tmp_path / "aoi.fgb")
    frame.to_crs(4326).to_file(tmp_path / "aoi.gpkg", layer="aoi")
    frame.to_crs(4326).to_file(tmp_path / "aoi.kml", driver="KML")
    files = [("aoi.shp", 0), ("aoi.fgb", 0), ("aoi.gpkg", 0.002), ("aoi.kml", 0.002)]
    for name, tolerance in files:
        drawn = resolve_mask(str(tmp_path / name), image)
        wrong = np.count_nonzero(drawn.values != gdal.astype(bool))
        assert wrong <= tolerance * gdal.sum(), (name, wrong)
        assert drawn.attrs["source"] == str(tmp_path / name)
    np.testing.assert_array_equal(resolve_mask(frame, image).values, gdal.astype(bool))
    from_gpkg = resolve_mask(str(tmp_path / "aoi.gpkg"), image).values
    np.testing.assert_array_equal(resolve_mask(frame.to_crs(4326), image).values, from_gpkg)

    capsys.readouterr()
    assert main(["info", str(tmp_path / "aoi.shp")]) == 0
    rows = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines())
    assert rows["format"] == "shapefile"
    assert rows["coordinates"] == "EPSG:32633 (WGS 84 / UTM zone 33N)"
    assert rows["features"] == "1: unclassified (Polygon)"

    frame.to_file(tmp_path / "two.gpkg", layer="first")
    frame.to_file(tmp_path / "two.gpkg", layer="second")
    with pytest.raises(ParameterError, match=r"holds 2 layers \(first, second\)"):
        resolve_mask(str(tmp_path / "two.gpkg"), image)
    with pytest.raises(ParameterError, match="a shapefile is read from a local file"):
        resolve_mask("https://example.invalid/aoi.shp", image)
    monkeypatch.setitem(sys.modules, "geopandas", None)  # as where it is not installed
    with pytest.raises(ParameterError, match=r"needs geopandas: pip install 'xfskde\[vector\]'"):
        resolve_mask(str(tmp_path / "aoi.shp"), image)


def test_the_regions_of_some_classes_only(slides, tmp_path, capsys):
    """A QuPath export holds every annotation (the tumour, an unclassified region, a fold to
    ignore); ``classes=["Tumor"]`` / ``--mask-classes Tumor`` draws the tumour only, the fold
    cut out of it still; the labels record the classes, and a resume with other classes is
    refused. A class the file does not hold is refused naming those it does (a typo drew
    nothing of it, silently, had it been skipped), and so are classes with a mask image."""
    fold = {"type": "Feature", "properties": {"classification": {"name": "Ignore*"}},
            "geometry": {"type": "Polygon", "coordinates": [
                [[600, 700], [800, 700], [800, 900], [600, 900], [600, 700]]]}}  # fmt: skip
    image = xr.DataArray(np.zeros((2048, 2048)), dims=("y", "x"))
    regions = {**REGIONS, "features": [*REGIONS["features"], fold]}
    tumour = resolve_mask(regions, image, classes=["Tumor"])
    expected = _expected((2048, 2048))
    expected[1200:1400, 1200:1600] = False  # the unclassified region
    expected[700:900, 600:800] = False  # the fold
    np.testing.assert_array_equal(tumour.values, expected)
    assert tumour.attrs["classes"] == ["Tumor"] and tumour.attrs["polygons"] == 1
    both = resolve_mask(regions, image, classes=["Tumor", "None"]).values
    assert both.sum() == INSIDE - 200 * 200  # everything but the fold
    derived = {**regions["features"][0], "properties": {
        "classification": {"names": ["Tumor", "Positive"], "color": [200, 0, 0]}}}  # fmt: skip
    positive = resolve_mask(
        {**regions, "features": [derived, *regions["features"][1:]]},
        image,
        classes=["Tumor: Positive"],
    )  # QuPath's derived class
    np.testing.assert_array_equal(positive.values, expected)
    with pytest.raises(ParameterError, match=r"holds no region of class 'Tumour': its classes "
                       r"are 'Ignore\*', 'None', 'Tumor'"):  # fmt: skip
        resolve_mask(regions, image, classes=["Tumour"])
    with pytest.raises(ParameterError, match="a class of a label image is its value"):
        resolve_mask(np.ones((8, 8)), image, classes=["Tumor"])  # an array: a label image

    sized, _, _ = slides
    (tmp_path / "regions.geojson").write_text(json.dumps(regions))
    labels = tmp_path / "labels.zarr"
    argv = ["segment", str(sized), str(labels), "--textures", "2", "--mask",
            str(tmp_path / "regions.geojson"), "--mask-classes", "Tumor", "--mpp", "1",
            "--no-progress"]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    values = zarr.open_group(labels)["labels"][:]
    np.testing.assert_array_equal(values > 0, expected[::2, ::2])
    assert xfskde.open_image(labels).attrs["mask_classes"] == "Tumor"
    argv[argv.index("Tumor")] = "Tumor,None"
    assert main([*argv, "--resume"]) == 2
    # what the user changed first, before all the segmentation chose from it
    assert 'parameters, shape, dims or coordinates (--mask-classes "Tumor" in the store, ' in (
        capsys.readouterr().err
    )
    assert main(["maps", str(sized), str(tmp_path / "m.zarr"), "--mask-classes", "Tumor"]) == 2
    assert "the mask 'none' has no classes" in capsys.readouterr().err


def test_qupath_s_cells_are_left_out_of_the_mask(tmp_path, capsys):
    """QuPath's export of all objects holds, beside the annotation, every cell it detected
    inside it as a polygon: the mask was the union of the nuclei. Detections, cells and tiles
    are left out (and counted), an export of nothing else is refused, and ``xfskde info``
    counts them apart."""
    cells = [
        {"type": "Feature", "properties": {"objectType": "cell"},
         "geometry": {"type": "Polygon", "coordinates": [
             [[x, y], [x + 10, y], [x + 10, y + 10], [x, y + 10], [x, y]]]}}
        for x in range(150, 850, 50) for y in range(250, 950, 50)
    ]  # fmt: skip
    annotation = {**REGIONS["features"][0],
                  "properties": {"objectType": "annotation",
                                 "classification": {"name": "Tumor"}}}  # fmt: skip
    image = xr.DataArray(np.zeros((2048, 2048)), dims=("y", "x"))
    export = {"type": "FeatureCollection", "features": [annotation, *cells]}
    mask = resolve_mask(export, image)
    expected = _expected((2048, 2048))
    expected[1200:1400, 1200:1600] = False  # the second region is not in this export
    np.testing.assert_array_equal(mask.values, expected)
    assert mask.attrs["detections_left_out"] == len(cells) == 196
    with pytest.raises(ParameterError, match=r"holds QuPath's detections only \(196 detection"):
        resolve_mask({"type": "FeatureCollection", "features": cells}, image)
    (tmp_path / "all.geojson").write_text(json.dumps(export))
    assert main(["info", str(tmp_path / "all.geojson")]) == 0
    rows = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines())
    assert rows["features"] == "197: Tumor (Polygon), 196 detections"
    assert rows["detections"].startswith("196 of QuPath's detections, cells or tiles")


def test_qupath_s_exports_in_every_form_it_writes_them(tmp_path):
    """QuPath's regions as a user hands them over: a list of features read with ``json.load``
    (its default export: refused in Python, as a list of dicts, though a file of it was read),
    a GeoDataFrame of the file (GDAL gives every GeoJSON WGS 84: refused on a slide, as in a
    CRS), objects nested under their parent (``childObjects``: not drawn), QuPath 0.2–0.3's
    ``object_type`` and 0.2's ``id`` (its detections drawn as regions), a single cell (drawn,
    where the same cell in a collection is left out) and a class with a comma in its name
    (split by ``--mask-classes`` and refused)."""
    image = xr.DataArray(np.zeros((2048, 2048)), dims=("y", "x"))
    expected = _expected((2048, 2048))
    features = REGIONS["features"]
    np.testing.assert_array_equal(resolve_mask(list(features), image).values, expected)
    np.testing.assert_array_equal(polygon_mask(list(features), image).values, expected)
    path = tmp_path / "regions.geojson"  # a FeatureCollection: GDAL reads no bare list
    path.write_text(json.dumps(REGIONS))
    geopandas = pytest.importorskip("geopandas")
    frame = geopandas.read_file(path)
    assert frame.crs.to_epsg() == 4326  # GDAL's, for any GeoJSON
    np.testing.assert_array_equal(resolve_mask(frame, image).values, expected)

    tumour, other = features[0], features[1]
    parent = {"type": "Feature", "properties": {"classification": {"name": "Tissue"}},
              "geometry": {"type": "Polygon", "coordinates": [
                  [[0, 0], [2000, 0], [2000, 2000], [0, 2000], [0, 0]]]},
              "childObjects": [{**tumour, "childObjects": [other]}]}  # fmt: skip
    nested = resolve_mask([parent], image, classes=["Tumor", "None"])
    np.testing.assert_array_equal(nested.values, expected)
    cell = {"type": "Feature", "geometry": other["geometry"]}
    for legacy in (
        {**cell, "properties": {"object_type": "detection"}},  # QuPath 0.3
        {**cell, "id": "PathCellObject", "properties": {}},
    ):  # QuPath 0.2
        mask = resolve_mask([tumour, legacy], image)
        assert mask.attrs["detections_left_out"] == 1
        assert mask.values.sum() == 800 * 800 - 200 * 200
        with pytest.raises(ParameterError, match="holds QuPath's detections only"):
            resolve_mask(legacy, image)  # one Feature, as in a collection
    dense = {**other, "properties": {"classification": {"name": "Stroma, dense"}}}
    drawn = resolve_mask([tumour, dense], image, classes=["Stroma", "dense"])  # as split
    assert drawn.attrs["classes"] == ["Stroma, dense"]
    assert drawn.values.sum() == 400 * 200


def test_regions_sharing_an_edge_share_no_pixel_as_gdal_draws_them():
    """Two QuPath regions abutting along y = 1750, drawn on level 2 (the edge through the
    centres of row 437): scikit-image's centre test counted that row in both (each class's
    area over-counted by its 100 pixels). Drawn as GDAL's scan lines draw them, half-open:
    each centre in one region."""
    from rasterio.features import rasterize

    image = xr.DataArray(np.zeros((80, 80)), dims=("y", "x"))
    shapes = [[[10, 10], [50, 10], [50, 30.5], [10, 30.5]],  # a row's centres on the edge
              [[10, 30.5], [50, 30.5], [50, 60], [10, 60]],
              [[10, 10], [30.5, 10], [30.5, 60], [10, 60]],  # a column's
              [[30.5, 10], [50, 10], [50, 60], [30.5, 60]],
              [[0.5, 0.5], [60.5, 60.5], [0.5, 60.5]],  # a diagonal's
              [[0.5, 0.5], [60.5, 0.5], [60.5, 60.5]]]  # fmt: skip
    drawn = []
    for ring in shapes:
        geometry = {"type": "Polygon", "coordinates": [[*ring, ring[0]]]}
        drawn.append(polygon_mask(geometry, image).values)
        gdal = rasterize([geometry], out_shape=(80, 80)).astype(bool)
        np.testing.assert_array_equal(drawn[-1], gdal)
    for first, second in zip(drawn[0::2], drawn[1::2], strict=True):
        assert not (first & second).any()
    assert [d.sum() for d in drawn[:2]] == [20 * 40, 30 * 40]


def test_on_a_plane_of_a_stack_the_regions_of_that_plane(tmp_path):
    """QuPath records the plane a region was drawn on (``geometry.plane``, z and t): on a
    plane of a z-stack each was drawn whatever its plane. A region naming its plane is drawn
    on that plane only, one naming none on every plane; regions on other planes only are
    refused naming theirs."""
    stack = np.zeros((3, 64, 64), np.uint8)
    tifffile.imwrite(tmp_path / "stack.ome.tif", stack, ome=True, metadata={"axes": "ZYX"})

    def square(top: int, plane: dict | None = None) -> dict:
        ring = [[8, top], [24, top], [24, top + 16], [8, top + 16], [8, top]]
        geometry = {"type": "Polygon", "coordinates": [ring], **({"plane": plane} if plane else {})}
        return {"type": "Feature", "properties": {"objectType": "annotation"}, "geometry": geometry}

    regions = {
        "type": "FeatureCollection",
        "features": [
            square(0, {"c": -1, "z": 1, "t": 0}),
            square(20, {"c": -1, "z": 0, "t": 0}),
            square(40),
        ],
    }
    for z, tops in [(1, (0, 40)), (0, (20, 40)), (2, (40,))]:
        plane = xfskde.open_image(tmp_path / "stack.ome.tif", plane={"z": z})
        mask = resolve_mask(regions, plane)
        expected = np.zeros((64, 64), bool)
        for top in tops:
            expected[top : top + 16, 8:24] = True
        np.testing.assert_array_equal(mask.values, expected)
        assert mask.attrs.get("other_planes_left_out", 0) == 3 - len(tops)
    flat = xr.DataArray(np.zeros((64, 64)), dims=("y", "x"))  # no stack: every region
    assert resolve_mask(regions, flat).values.sum() == 3 * 16 * 16
    elsewhere = {"type": "FeatureCollection", "features": [square(0, {"z": 2, "t": 0})]}
    refusal = r"on other planes \(z=2; QuPath's plane\) than the image's \(z=0\)"
    with pytest.raises(ParameterError, match=refusal):
        resolve_mask(elsewhere, xfskde.open_image(tmp_path / "stack.ome.tif", plane={"z": 0}))


def test_an_area_of_interest_on_a_rotated_scene_as_gdal_draws_it(tmp_path):
    """A scene whose GeoTransform has rotation terms (its x and y are pixel indices, its
    coordinates 2-D): a polygon in its CRS is placed through the inverse of that affine
    transform, pixel for pixel as GDAL's rasterize draws it with the rotated transform. It
    was refused ("x and y coords are not a regular grid")."""
    rasterio = pytest.importorskip("rasterio")
    pytest.importorskip("rioxarray")
    from affine import Affine
    from rasterio.features import rasterize

    transform = Affine(9.659258, -2.588190, 500_000.0, -2.588190, -9.659258, 4_600_000.0)
    profile = {"driver": "GTiff", "width": 160, "height": 128, "count": 1, "dtype": "uint16",
               "crs": "EPSG:32633", "transform": transform}  # fmt: skip
    with rasterio.open(tmp_path / "rotated.tif", "w", **profile) as file:
        file.write(np.ones((128, 160), np.uint16), 1)
    image = xfskde.open_image(tmp_path / "rotated.tif")
    ring = [[500_300, 4_598_800], [501_200, 4_598_900], [500_900, 4_599_700], [500_300, 4_598_800]]
    aoi = {"type": "Polygon", "coordinates": [ring],
           "crs": {"type": "name", "properties": {"name": "EPSG:32633"}}}  # fmt: skip
    gdal = rasterize([aoi], out_shape=(128, 160), transform=transform).astype(bool)
    assert gdal.sum() > 2000
    np.testing.assert_array_equal(resolve_mask(aoi, image).values, gdal)
    # a crop that keeps the whole scene's transform is drawn on the crop's own pixels, from
    # its xc/yc (it was refused); a flip, which no transform of its axes places, is refused
    crop = image.isel(y=slice(10, None), x=slice(7, 150))
    np.testing.assert_array_equal(resolve_mask(aoi, crop).values, gdal[10:, 7:150])
    with pytest.raises(ParameterError, match="do not follow its rotated GeoTransform"):
        resolve_mask(aoi, image.isel(y=slice(None, None, -1)))
