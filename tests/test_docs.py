"""The docs stay true: pages exist, links resolve, code runs, public names are documented."""

import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import xfskde

ROOT = Path(__file__).resolve().parent.parent
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
FENCE = re.compile(r"(<!-- no-run -->\s*)?```python\n(.*?)```", re.S)


def test_nav_pages_exist():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    listed = [next(iter(item.values())) for item in config["nav"]]
    for page in listed:
        assert (ROOT / "docs" / page).stat().st_size > 200, page
    assert sorted(listed) == sorted(p.name for p in (ROOT / "docs").glob("*.md"))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page):
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
        if "://" in target:
            continue
        assert (page.parent / target).exists(), f"{page.name} links to missing {target}"


def _runnable(page: Path) -> list[str]:
    return [code for skip, code in FENCE.findall(page.read_text()) if not skip]


@pytest.mark.parametrize("page", [p for p in PAGES if _runnable(p)], ids=lambda p: p.name)
def test_code_blocks_run(page, tmp_path):
    script = "\n\n".join(_runnable(page))
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]


@pytest.mark.parametrize("name", xfskde.__all__)
def test_public_names_have_numpydoc_docstrings(name):
    obj = getattr(xfskde, name)
    if name == "__version__":
        return
    doc = inspect.getdoc(obj) or ""
    assert len(doc) > 40, name
    if inspect.isfunction(obj):
        assert "Parameters" in doc or "Returns" in doc, name


@pytest.mark.parametrize("module", ["kernel", "density", "canonical", "local", "api"])
def test_modules_cite_the_paper(module):
    text = inspect.getsource(getattr(xfskde, module))
    assert re.search(r"eq\. ?\d|section \d", text), module
