"""Print pip constraints that pin every dependency of ``pyproject.toml`` to its oldest version.

``pip install . -c <(python .ci/oldest.py)`` installs the library with the versions its
``dependencies`` name as their minimum (``numpy>=2.0`` -> ``numpy==2.0``; extras dropped, as
constraints take none), and their own dependencies as pip resolves them. ``.ci/run`` runs every
command of a plain install that way (``.ci/plain_install.py``), so a minimum that is too low —
an API the library uses appearing later — fails CI rather than a user with an older
environment.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def oldest(requirements: list[str]) -> list[str]:
    """``name==minimum`` for each requirement with a ``>=`` bound (PEP 508, read by packaging;
    extras dropped), the others skipped."""
    pins = []
    for text in requirements:
        requirement = Requirement(text)
        pins += [f"{requirement.name}=={s.version}" for s in requirement.specifier
                 if s.operator == ">="]  # fmt: skip
    return pins


if __name__ == "__main__":
    print("\n".join(oldest(tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"])))
