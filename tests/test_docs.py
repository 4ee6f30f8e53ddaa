"""The docs stay true: the site's nav and links resolve, code runs, public names are documented.

The checks read mkdocs.yml and the Markdown directly, and one builds the site with mkdocs (the
docs extra: CI installs it; without it that test skips). The Python
code blocks of a page run one after the other in one fresh interpreter, like notebook cells; a
block preceded by ``<!-- no-run -->`` (one that needs a slide or a cluster) is skipped.
"""

from __future__ import annotations

import importlib
import inspect
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
import yaml

import xfskde

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = [*sorted(DOCS.glob("*.md")), README]
FENCE = re.compile(r"(<!-- no-run -->[ \t]*\n)?```python\n(.*?)```", re.S)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
# pages whose examples must run (the brief of the docs: no page may get away with none)
MUST_RUN = ["concepts.md", "kernel.md", "getting-started.md", "index.md", "README.md"]
# public modules that the API reference documents
API_MODULES = ["kernel", "density", "canonical", "gradients", "windows", "api", "local", "lazy"]
# the paper's modules: their docstrings cite its equations or sections
PAPER_MODULES = ["kernel", "density", "canonical", "local", "api"]
CITATION = re.compile(r"\beqs?\. ?\d|\bsections? \d|\bTheorem \d|\bFigure \d", re.I)
QUICK_START = [
    'pip install ".[plot]" && xfskde demo',
    'pip install -e ".[test]" && python -m pytest',
]


def _config() -> dict:
    # mkdocs.yml may hold !!python/name tags in the future; plain YAML is all that is read here
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text())


def _nav_pages(nav) -> list[str]:
    """Every Markdown page in a (possibly nested) mkdocs nav."""
    if isinstance(nav, str):
        return [nav] if nav.endswith(".md") else []
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _nav_pages(value)]
    return [page for item in nav for page in _nav_pages(item)]


def _slug(heading: str) -> str:
    """Python-Markdown's toc slug (mkdocs default): ASCII, lowercase, spaces to hyphens."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    return {_slug(h) for h in re.findall(r"^#{1,6}\s+(.+?)\s*#*$", text, re.M)}


def _runnable(page: Path) -> list[str]:
    return [code for skip, code in FENCE.findall(page.read_text()) if not skip]


def test_mkdocs_config():
    config = _config()
    assert config["theme"]["name"] == "material"
    plugins = {next(iter(p)) if isinstance(p, dict) else p: p for p in config["plugins"]}
    python = plugins["mkdocstrings"]["mkdocstrings"]["handlers"]["python"]
    assert python["options"]["docstring_style"] == "numpy"
    assert _nav_pages(config["nav"])[0] == "index.md"


def test_nav_pages_are_not_empty():
    listed = _nav_pages(_config()["nav"])
    assert len(listed) == len(set(listed)), "a page is listed twice in the nav"
    present = [page for page in listed if (DOCS / page).exists()]
    assert {"index.md", "getting-started.md", "concepts.md", "kernel.md", "api.md"} <= set(present)
    for page in present:
        text = (DOCS / page).read_text()
        assert text.startswith("# ") and len(text) > 300, f"{page} is empty or has no title"


def test_every_page_is_in_the_nav():
    listed = set(_nav_pages(_config()["nav"]))
    orphans = sorted(p.name for p in DOCS.glob("*.md") if p.name not in listed)
    assert not orphans, f"pages missing from mkdocs.yml nav: {orphans}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page):
    for target in LINK.findall(page.read_text()):
        if "://" in target or target.startswith("mailto:"):
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        assert resolved.exists(), f"{page.name} links to missing {target}"
        if page.parent == DOCS:  # mkdocs --strict: a docs page may not link out of docs/
            assert resolved.is_relative_to(DOCS), f"{page.name} links out of docs/: {target}"
        if anchor and resolved.suffix == ".md":
            assert anchor in _anchors(resolved), f"{page.name}: no heading #{anchor} in {path}"


def test_api_reference_lists_importable_modules():
    entries = re.findall(r"^::: ([\w.]+)\s*$", (DOCS / "api.md").read_text(), re.M)
    for entry in entries:
        importlib.import_module(entry)
    assert {f"xfskde.{m}" for m in API_MODULES} <= set(entries)
    assert len(entries) == len(set(entries)), "a module is documented twice"


@pytest.mark.parametrize("name", MUST_RUN)
def test_pages_have_runnable_examples(name):
    page = README if name == "README.md" else DOCS / name
    assert _runnable(page), f"{name} has no Python example that the tests run"


@pytest.mark.parametrize("page", [p for p in PAGES if _runnable(p)], ids=lambda p: p.name)
def test_code_blocks_run(page, tmp_path, forked_python):
    script = "\n\n".join(_runnable(page))
    # as `python -c script` runs it, in a process of its own (forked: tests/_forked.py)
    result = forked_python.run(tmp_path, code=script, timeout=120)
    assert result.returncode == 0, f"{page.name}:\n{result.stderr[-3000:]}"


def test_readme_quick_start_is_two_commands():
    text = README.read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, re.S)]
    assert commands == QUICK_START
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert [line for line in ci if line in QUICK_START] == QUICK_START  # both, in order
    testing = text.split("## Testing", 1)[1].split("\n## ", 1)[0]
    for command in ("python -m pytest", "python -m pytest -m slow", 'python -m pytest -m ""'):
        assert f"`{command}`" in testing


def _documented_parameters(doc: str) -> set[str]:
    """Names in a numpydoc Parameters section ('a, b : type' lines at the section's indent)."""
    match = re.search(r"^Parameters\n-{3,}\n(.*?)(?:\n\n\S[^\n]*\n-{3,}\n|\Z)", doc, re.S | re.M)
    if not match:
        return set()
    names = set()
    for line in match.group(1).splitlines():
        if line and not line[0].isspace():
            head = line.split(" : ")[0] if " : " in line else line
            names.update(n.strip().lstrip("*") for n in head.split(","))
    return names


def _public_names():
    return [name for name in xfskde.__all__ if name != "__version__"]


@pytest.mark.parametrize("name", _public_names())
def test_public_names_have_numpydoc_docstrings(name):
    obj = getattr(xfskde, name)
    doc = inspect.getdoc(obj) or ""
    assert len(doc.splitlines()[0]) > 10, f"{name} needs a one-line summary"
    if inspect.isclass(obj):
        assert len(doc) > 80, f"class {name} needs a docstring"
        for attr, member in vars(obj).items():
            if not attr.startswith("_") and callable(getattr(member, "__func__", member)):
                assert inspect.getdoc(getattr(obj, attr)), f"{name}.{attr} has no docstring"
        init = vars(obj).get("__init__")
        signature = inspect.signature(init) if init else None
    else:
        assert re.search(r"^(Parameters|Returns)\n-{3,}$", doc, re.M), (
            f"{name}: no numpydoc Parameters/Returns section"
        )
        signature = inspect.signature(obj)
    if signature is None:
        return
    wanted = {p for p in signature.parameters if p not in ("self", "cls", "args", "kwargs")}
    missing = wanted - _documented_parameters(doc)
    assert not missing, f"{name}: parameters {sorted(missing)} are not in its Parameters section"


def test_the_site_builds_without_a_warning(tmp_path):
    """``mkdocs build --strict``: every page and the API reference render, every docstring
    parsed as numpydoc (a paragraph after a class's Attributes section once stopped the build:
    mkdocstrings read it as attributes, one with no name)."""
    for module in ("mkdocs", "material", "mkdocstrings_handlers.python"):
        pytest.importorskip(module, reason="the docs extra builds the site")
    site = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    api = (site / "api" / "index.html").read_text()
    assert "TextureModel" in api and "pixel_size" in api


@pytest.mark.parametrize("module", PAPER_MODULES)
def test_modules_cite_the_paper(module):
    mod = importlib.import_module(f"xfskde.{module}")
    assert CITATION.search(inspect.getsource(mod)), f"xfskde.{module} cites no equation/section"
    public = [getattr(xfskde, n) for n in _public_names()]
    for name in getattr(mod, "__all__", []):
        obj = getattr(mod, name)
        if any(obj is p for p in public) and getattr(obj, "__module__", "") == mod.__name__:
            assert CITATION.search(inspect.getdoc(obj) or ""), f"{name} cites no equation/section"
