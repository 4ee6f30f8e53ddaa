"""Test helper: VRT stacks written by hand, as ``gdalbuildvrt -separate`` writes them."""

from __future__ import annotations

import rasterio
from rasterio.transform import Affine


def write_vrt(
    path,
    sources: list[str],
    names: tuple[str, ...],
    *,
    side: int,
    transform: Affine,
    crs: str,
    nodata: tuple[int, ...] | None = None,
) -> None:
    """A VRT of ``side``² pixels stacking one-band files (paths relative to the VRT) as bands
    named ``names``, each with its NoDataValue (``nodata``, one per band; default 0 for all)."""
    nodata = nodata if nodata is not None else (0,) * len(sources)
    bands = "".join(
        f'<VRTRasterBand dataType="UInt16" band="{i}"><Description>{name}</Description>'
        f"<NoDataValue>{value}</NoDataValue><SimpleSource>"
        f'<SourceFilename relativeToVRT="1">{source}</SourceFilename><SourceBand>1</SourceBand>'
        f'<SrcRect xOff="0" yOff="0" xSize="{side}" ySize="{side}"/>'
        f'<DstRect xOff="0" yOff="0" xSize="{side}" ySize="{side}"/></SimpleSource>'
        f"</VRTRasterBand>\n"
        for i, (source, name, value) in enumerate(zip(sources, names, nodata, strict=True), 1)
    )
    t = transform
    path.write_text(
        f'<VRTDataset rasterXSize="{side}" rasterYSize="{side}">'
        f"<SRS>{rasterio.crs.CRS.from_string(crs).to_wkt()}</SRS>"
        f"<GeoTransform>{t.c}, {t.a}, {t.b}, {t.f}, {t.d}, {t.e}</GeoTransform>\n"
        f"{bands}</VRTDataset>\n"
    )
