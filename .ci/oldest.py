"""Print pip constraints that pin every dependency of ``pyproject.toml`` to its oldest version.

``pip install . -c <(python .ci/oldest.py)`` installs the library with the versions its
``dependencies`` name as their minimum (``numpy>=2.0`` -> ``numpy==2.0``; extras dropped, as
constraints take none), and their own dependencies as pip resolves them. ``.ci/run`` runs every
command of a plain install that way (``.ci/plain_install.py``), so a minimum that is too low —
an API the library uses appearing later — fails CI rather than a user with an older
environment.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def oldest(requirements: list[str]) -> list[str]:
    """``name==minimum`` for each ``name[extras]>=minimum`` requirement (others are skipped)."""
    pins = []
    for requirement in requirements:
        match = re.fullmatch(r"\s*([A-Za-z0-9._-]+)(\[[^\]]*\])?\s*>=\s*([^,;\s]+)\s*", requirement)
        if match:
            pins.append(f"{match.group(1)}=={match.group(3)}")
    return pins


if __name__ == "__main__":
    print("\n".join(oldest(tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"])))
