"""Molecular dynamics of a Lennard-Jones liquid: forces from `tp.grad` of the energy, velocity Verlet under `tp.jit`.

The atoms sit in a periodic cubic box (minimum-image convention) and interact through the Lennard-Jones pair
potential truncated at `CUTOFF` and shifted to zero there (reduced units: epsilon = sigma = mass = 1).  The energy
is written once, in plain NumPy, over a list of neighbouring pairs; nobody writes the forces: `verlet_step` asks
`tp.value_and_grad(pair_energy)` for them, and `tp.jit(verlet_step)` compiles the whole step, gradient included.
The pair list (a Verlet list: pairs closer than the cutoff plus a skin) is rebuilt in NumPy between steps,
whenever an atom has moved more than half the skin since the last build.

`tp.jit` answers the first steps with the step's NumPy code while Numba compiles the whole step in another
process, then switches to the compiled code; the printout says how many steps each tier answered.
`--backend numba-kernels` compiles only the step's loop nests (seconds rather than half a minute).

Velocity Verlet conserves the total energy up to a small fluctuation that shrinks as dt**2, so the drift of
kinetic plus potential energy printed at the end checks the forces and the integrator together.  A figure of the
energies over time is saved (matplotlib, Agg).

Run it with `.venv/bin/python samples/md.py [--atoms N] [--steps N] [--dt DT] [--out PATH] [--backend NAME]`.
"""

import argparse
import time
from pathlib import Path

import numpy as np

import transpile as tp

DENSITY = 0.8  # atoms per unit volume (sigma**-3): a dense liquid
TEMPERATURE = 1.0  # initial temperature (epsilon / k_B)
CUTOFF = 2.5  # pairs farther apart than this do not interact
SKIN = 0.3  # the pair list holds pairs closer than CUTOFF + SKIN
DT = 0.005
FIGURE = Path(__file__).resolve().parent / "figures" / "md.png"


def pair_energy(positions, first, second, box, cutoff):
    """The potential energy: Lennard-Jones over the pairs (first[k], second[k]), truncated and shifted at cutoff."""
    d = positions[first] - positions[second]
    d = d - box * np.round(d / box)  # minimum image
    r2 = np.sum(d * d, axis=1)
    inside = r2 < cutoff * cutoff
    s6 = (1.0 / np.where(inside, r2, 1.0)) ** 3
    c6 = (1.0 / (cutoff * cutoff)) ** 3
    shift = 4.0 * (c6 * c6 - c6)
    return np.sum(np.where(inside, 4.0 * (s6 * s6 - s6) - shift, 0.0))


energy_and_gradient = tp.value_and_grad(pair_energy)


def verlet_step(positions, velocities, forces, first, second, box, cutoff, dt):
    """One velocity Verlet step (unit masses): the new positions, velocities, forces and potential energy."""
    velocities = velocities + 0.5 * dt * forces
    positions = positions + dt * velocities
    potential, gradient = energy_and_gradient(positions, first, second, box, cutoff)
    forces = -gradient
    velocities = velocities + 0.5 * dt * forces
    return positions, velocities, forces, potential


def kinetic_energy(velocities):
    return 0.5 * np.sum(velocities * velocities)


def neighbor_pairs(positions, box, reach):
    """The pairs i < j closer than `reach` (minimum image), as two index arrays."""
    r2 = 0.0
    for axis in range(positions.shape[1]):
        d = positions[:, None, axis] - positions[None, :, axis]
        d -= box * np.round(d / box)
        r2 = r2 + d * d
    return np.nonzero(np.triu(r2 < reach * reach, 1))


def initial_state(atoms, rng, density=DENSITY, temperature=TEMPERATURE):
    """Atoms on a simple cubic lattice filling the box (the first `atoms` sites), random velocities at
    `temperature` with no net momentum; returns positions, velocities and the box's side."""
    box = (atoms / density) ** (1.0 / 3.0)
    per_side = int(np.ceil(atoms ** (1.0 / 3.0) - 1e-9))
    sites = np.stack(np.meshgrid(*[np.arange(per_side)] * 3, indexing="ij"), axis=-1).reshape(-1, 3)
    positions = (sites[:atoms] + 0.5) * (box / per_side)
    velocities = rng.standard_normal((atoms, 3))
    velocities -= velocities.mean(axis=0)
    velocities *= np.sqrt(3 * atoms * temperature / np.sum(velocities * velocities))
    return positions, velocities, box


def simulate(positions, velocities, box, steps, dt=DT, cutoff=CUTOFF, skin=SKIN, step=None, progress=None):
    """Run `steps` velocity Verlet steps of `step` (default: tp.jit(verlet_step)); returns the final positions and
    velocities, the kinetic and potential energies before each step and after the last (steps + 1 of each), and
    how many times the pair list was built."""
    if box < 2 * cutoff:
        raise ValueError(f"a box of side {box:.3f} is smaller than twice the cutoff {cutoff}: take more atoms")
    step = tp.jit(verlet_step) if step is None else step
    first, second = neighbor_pairs(positions, box, cutoff + skin)
    built_at, builds = positions, 1
    potential, gradient = energy_and_gradient(positions, first, second, box, cutoff)
    forces = -gradient
    kinetic, potentials = [kinetic_energy(velocities)], [float(potential)]
    for _ in range(steps):
        moved = positions - built_at  # positions are never wrapped into the box: the minimum image does that
        if np.max(np.sum(moved * moved, axis=1)) > (0.5 * skin) ** 2:
            first, second = neighbor_pairs(positions, box, cutoff + skin)
            built_at, builds = positions, builds + 1
        positions, velocities, forces, potential = step(positions, velocities, forces, first, second, box, cutoff, dt)
        kinetic.append(kinetic_energy(velocities))
        potentials.append(float(potential))
        if progress is not None:
            progress.update(1)
    return positions, velocities, np.array(kinetic), np.array(potentials), builds


def relative_drift(total):
    """The largest deviation of the total energy from its start, relative to the start."""
    return float(np.max(np.abs(total - total[0])) / abs(total[0]))


def end_drift(total):
    """The total energy's change from start to end, relative to the start."""
    return float((total[-1] - total[0]) / abs(total[0]))


def plot_energies(times, kinetic, potential, out, title=None):
    """Kinetic, potential and total energy per atom against time, saved to `out` (a PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 5), sharex=True)
    top.plot(times, kinetic, label="kinetic")
    top.plot(times, potential, label="potential")
    top.plot(times, kinetic + potential, label="total")
    top.set_ylabel("energy per atom")
    top.legend(loc="center right")
    if title:
        top.set_title(title)
    total = kinetic + potential
    bottom.plot(times, total - total[0], color="C2")
    bottom.set_ylabel("total - initial total")
    bottom.set_xlabel("time (reduced units)")
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=80)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--atoms", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--dt", type=float, default=DT)
    parser.add_argument("--out", default=str(FIGURE), help="where the figure goes (default: %(default)s)")
    parser.add_argument("--backend", default="numba", help="tp.jit's backend for the step (default: %(default)s)")
    args = parser.parse_args(argv)

    from tqdm import tqdm

    positions, velocities, box = initial_state(args.atoms, np.random.default_rng(0))
    print(f"# {args.atoms} Lennard-Jones atoms, density {DENSITY}, box {box:.3f}, cutoff {CUTOFF}, dt {args.dt}")
    step = tp.jit(verlet_step, backend=args.backend)
    start, cpu = time.perf_counter(), time.process_time()
    with tqdm(total=args.steps, unit="step") as progress:
        _, _, kinetic, potential, builds = simulate(
            positions, velocities, box, args.steps, args.dt, step=step, progress=progress
        )
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    total = kinetic + potential
    tiers = step.stats()
    compiled = args.steps - tiers["numpy_tier"] - tiers["kernels_tier"]
    print(
        f"{args.steps} steps in {elapsed:.1f} s ({cpu:.1f} s CPU in this process), {builds} pair lists; steps run by "
        f"NumPy code {tiers['numpy_tier']}, by kernels {tiers['kernels_tier']}, compiled {compiled}"
    )
    print(f"total energy per atom: start {total[0] / args.atoms:.6f}, end {total[-1] / args.atoms:.6f}")
    print(f"relative energy drift = {relative_drift(total):.2e} (largest; end - start: {end_drift(total):.2e})")
    times = args.dt * np.arange(args.steps + 1)
    title = f"{args.atoms} Lennard-Jones atoms, velocity Verlet, dt {args.dt}"
    plot_energies(times, kinetic / args.atoms, potential / args.atoms, args.out, title)
    print(f"figure saved to {args.out}")


if __name__ == "__main__":
    main()
