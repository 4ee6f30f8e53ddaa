"""docs/make_figures.py: the cheap figures are written, and Theorem 1's expectation is right."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import xfskde

pytest.importorskip("matplotlib")
SCRIPT = Path(__file__).resolve().parent.parent / "docs" / "make_figures.py"


def _module():
    spec = importlib.util.spec_from_file_location("_make_figures", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quick_figures_are_written(tmp_path):
    names = ["fig1", "fig2", "fig4", "fig5", "fig6", "segmentation_mosaics"]
    paths = _module().main(["--quick", "--only", ",".join(names), "--out", str(tmp_path)])
    assert [p.name for p in paths] == [f"{n}.png" for n in names]
    for path in paths:
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and 10_000 < len(data) < 250_000, path.name


def test_unknown_figure_is_refused(tmp_path):
    with pytest.raises(SystemExit) as error:
        _module().main(["--only", "fig3", "--out", str(tmp_path)])
    assert error.value.code == 2


def _direct_simulation(module, angles, weights, sigma, n_trials, seed):
    """||F̃ − canonical(F̃)|| over noisy versions, written out from Theorem 1's noise model."""
    rng = np.random.default_rng(seed)
    n = angles.size
    z = weights * np.exp(1j * angles)
    scale = sigma / np.sqrt(n)  # per part and sample: the sums over n have std sigma
    noisy = z + rng.normal(0, scale, (n_trials, n)) + 1j * rng.normal(0, scale, (n_trials, n))
    w = np.abs(noisy) * n / np.abs(noisy).sum(axis=1, keepdims=True)  # alpha: sum = N
    F = xfskde.fskde(np.angle(noisy), w, order=module.ORDER)
    C = F * np.exp(-1j * np.arange(F.shape[1]) * np.angle(F[:, 1:2]))  # eq. 9 written out
    d2 = np.abs(F - C) ** 2
    return float(np.mean(np.sqrt(d2[:, 0] + 2 * d2[:, 1:].sum(axis=1))))  # k = -K .. K


def test_theorem1_expectation_against_a_direct_simulation():
    module = _module()
    n = module.N_SAMPLES
    assert module.theorem1_expectation(0.1, 0.0, module.ORDER) == 0.0
    # all mass at angle 0 and little noise: |F̃_k| ≈ H_k = B_k N, the bound is nearly an equality
    angles, weights = np.zeros(n), np.ones(n)
    H1 = xfskde.Cos2KKernel(module.ORDER).coefficients[1]
    bound = module.theorem1_expectation(H1, 0.2, module.ORDER, n_draws=40000)
    simulated = _direct_simulation(module, angles, weights, 0.2, 4000, seed=1)
    assert 0.9 * bound < simulated < 1.04 * bound, (simulated, bound)
    # more noise spreads the noisy angles, |F̃_k| < H_k for large k: a strict upper bound
    for sigma in (2.0, 6.0):
        bound = module.theorem1_expectation(H1, sigma, module.ORDER, n_draws=40000)
        simulated = _direct_simulation(module, angles, weights, sigma, 4000, seed=1)
        assert 0.2 * bound < simulated < bound, (sigma, simulated, bound)
    # a spread, two-peaked set: small |F1|; the expectation still bounds the simulation
    angles, weights = module._distribution("small", np.random.default_rng(5))
    F1 = abs(xfskde.fskde(angles, weights, order=module.ORDER)[1])
    assert F1 < 0.3 * H1
    bound = module.theorem1_expectation(F1, 3.0, module.ORDER, n_draws=40000)
    simulated = _direct_simulation(module, angles, weights, 3.0, 4000, seed=2)
    assert simulated <= 1.03 * bound
    # and the expectation grows as |F1| shrinks relative to the noise (the theorem's message)
    values = module.theorem1_expectation(np.array([H1, F1])[:, None], 3.0, module.ORDER)
    assert values[1] > 2 * values[0]


def test_simulation_helper_matches_the_direct_one():
    module = _module()
    angles, weights = module._distribution("large", np.random.default_rng(3))
    _, rows = module.simulate_canonicalization(angles, weights, [0.0, 4.0], n_trials=300, seed=4)
    np.testing.assert_allclose(rows[0], 0, atol=1e-15)  # no noise: nothing changes
    direct = _direct_simulation(module, angles, weights, 4.0, 4000, seed=9)
    np.testing.assert_allclose(rows[1, 2], direct, rtol=0.15)
