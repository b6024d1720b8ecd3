"""samples/md.py in a reduced size: forces against central differences, energy conserved, the figure written."""

import numpy as np
import pytest
from support import numeric_grad, sample_module

import transpile as tp


@pytest.fixture(scope="module")
def md():
    return sample_module("md")


@pytest.fixture(scope="module")
def small(md):
    """125 atoms on a jostled lattice (no two very close), with velocities, in a box of side about 5.4."""
    positions, velocities, box = md.initial_state(125, np.random.default_rng(3))
    positions = positions + 0.08 * np.random.default_rng(4).standard_normal(positions.shape)
    return positions, velocities, box


def minimum_image(d, box):
    return d - box * np.round(d / box)


def test_pairs_are_those_within_reach(md, small):
    positions, _, box = small
    first, second = md.neighbor_pairs(positions, box, 1.5)
    n = len(positions)
    expected = [
        (i, j)
        for i in range(n)
        for j in range(i + 1, n)
        if np.sum(minimum_image(positions[i] - positions[j], box) ** 2) < 1.5**2
    ]
    assert list(zip(first.tolist(), second.tolist())) == expected
    assert 0 < len(expected) < n * (n - 1) // 2


def test_forces_are_minus_central_differences_of_the_energy(md, small):
    positions, _, box = small
    first, second = md.neighbor_pairs(positions, box, 1.4)
    cutoff = 1.2  # some listed pairs lie beyond it: the np.where cutoff is differentiated too
    r = np.sqrt(np.sum(minimum_image(positions[first] - positions[second], box) ** 2, axis=1))
    assert np.any(r > cutoff) and np.any(r < cutoff)
    forces = -tp.grad(md.pair_energy)(positions, first, second, box, cutoff)
    numeric = -numeric_grad(md.pair_energy, (positions, first, second, box, cutoff), eps=1e-6)
    np.testing.assert_allclose(forces, numeric, rtol=1e-6, atol=1e-6 * np.max(np.abs(numeric)))
    np.testing.assert_allclose(forces.sum(axis=0), 0.0, atol=1e-9 * np.max(np.abs(forces)))


def test_the_energy_matches_a_loop_over_all_pairs(md, small):
    positions, _, box = small
    cutoff = 1.2
    first, second = md.neighbor_pairs(positions, box, 2.0)
    expected = 0.0
    for i in range(len(positions)):
        for j in range(i + 1, len(positions)):
            r2 = np.sum(minimum_image(positions[i] - positions[j], box) ** 2)
            if r2 < cutoff**2:
                expected += 4 * (r2**-6 - r2**-3) - 4 * (cutoff**-12 - cutoff**-6)
    assert md.pair_energy(positions, first, second, box, cutoff) == pytest.approx(expected, rel=1e-12)


def test_the_compiled_step_is_the_step(md, small):
    positions, velocities, box = small
    first, second = md.neighbor_pairs(positions, box, md.CUTOFF + md.SKIN)
    forces = -tp.grad(md.pair_energy)(positions, first, second, box, md.CUTOFF)
    arguments = (positions, velocities, forces, first, second, box, md.CUTOFF, md.DT)
    step = tp.jit(md.verlet_step, backend="numba-kernels")  # its loop nests compile in seconds, not the module
    for compiled, plain in zip(step(*arguments), md.verlet_step(*arguments)):
        np.testing.assert_allclose(compiled, plain, rtol=1e-12, atol=1e-12)
    assert step.stats()["tier"] == "compiled"


def test_energy_is_conserved_and_the_figure_written(md, tmp_path):
    positions, velocities, box = md.initial_state(125, np.random.default_rng(0))
    _, _, kinetic, potential, builds = md.simulate(positions, velocities, box, 200, step=md.verlet_step)
    total = kinetic + potential
    assert len(total) == 201 and builds > 1  # the pair list was rebuilt along the way
    assert np.ptp(kinetic) > 0.05 * np.mean(kinetic)  # energy moves between kinetic and potential
    assert md.relative_drift(total) < 2e-3
    # halving dt shrinks the fluctuation of the total about four times (velocity Verlet is second order)
    half = md.simulate(positions, velocities, box, 400, dt=md.DT / 2, step=md.verlet_step)
    ratio = md.relative_drift(total) / md.relative_drift(half[2] + half[3])
    assert 2.5 < ratio < 6.0
    out = tmp_path / "md.png"
    md.plot_energies(md.DT * np.arange(201), kinetic / 125, potential / 125, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_main_runs_a_small_system(md, tmp_path, capsys):
    out = tmp_path / "figure.png"
    md.main(["--atoms", "125", "--steps", "20", "--out", str(out), "--backend", "numba-kernels"])
    printed = capsys.readouterr().out
    assert "relative energy drift = " in printed
    assert out.exists()
