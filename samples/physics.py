"""Forces as minus the gradient of an energy written the way simulation codes write it.

Two small systems, both in plain NumPy with explicit loops and in-place accumulation into
arrays created inside the function (`out = np.zeros(n)`, then `out[i] += ...`), which
transpile differentiates exactly (JAX would reject the in-place writes):

- a Lennard-Jones cluster of a few atoms in 3-D, energy summed per atom;
- a chain of masses joined by springs, plus a velocity-Verlet trajectory whose final
  kinetic energy is differentiated with respect to the initial displacements.

Each gradient is checked against central differences in the printout.
Run it with `.venv/bin/python samples/physics.py`.
"""

import numpy as np

import transpile as tp


def lj_per_atom(positions, epsilon, sigma):
    """Lennard-Jones energy of each atom (half of each pair's energy goes to either atom)."""
    n = positions.shape[0]
    per_atom = np.zeros(n)
    for i in range(n):
        for j in range(i + 1, n):
            d = positions[i] - positions[j]
            r2 = np.sum(d * d)
            s6 = (sigma * sigma / r2) ** 3
            pair = 4.0 * epsilon * (s6 * s6 - s6)
            per_atom[i] += 0.5 * pair
            per_atom[j] += 0.5 * pair
    return per_atom


def lj_energy(positions, epsilon=1.0, sigma=1.0):
    return np.sum(lj_per_atom(positions, epsilon, sigma))


def spring_forces(x, k, rest):
    """Forces on a free chain of masses at positions x joined by springs of stiffness k."""
    n = x.shape[0]
    forces = np.zeros(n)
    for i in range(n - 1):
        stretch = x[i + 1] - x[i] - rest
        forces[i] += k * stretch
        forces[i + 1] -= k * stretch
    return forces


def chain_energy(x, k, rest):
    n = x.shape[0]
    energy = 0.0
    for i in range(n - 1):
        stretch = x[i + 1] - x[i] - rest
        energy = energy + 0.5 * k * stretch**2
    return energy


def final_kinetic_energy(x0, k, rest, dt, steps):
    """Velocity Verlet from rest at x0 (unit masses); the kinetic energy after `steps` steps."""
    x = np.zeros_like(x0)
    x[:] = x0
    v = np.zeros_like(x0)
    f = spring_forces(x, k, rest)
    for _ in range(steps):
        v += 0.5 * dt * f
        x += dt * v
        f = spring_forces(x, k, rest)
        v += 0.5 * dt * f
    return 0.5 * np.sum(v * v)


def central_difference(fun, x, eps=1e-6):
    """The gradient of a scalar function by central differences, one coordinate at a time."""
    grad = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        step = np.zeros_like(x)
        step[idx] = eps
        grad[idx] = (fun(x + step) - fun(x - step)) / (2 * eps)
    return grad


def lennard_jones_cluster():
    """A slightly perturbed tetrahedron of 4 atoms plus one more atom nearby."""
    rng = np.random.default_rng(1)
    tetrahedron = np.array([[1.0, 1.0, 1.0], [1.0, -1.0, -1.0], [-1.0, 1.0, -1.0], [-1.0, -1.0, 1.0]])
    positions = np.vstack([tetrahedron * 0.62, [[1.6, 0.3, -0.2]]])
    return positions + 0.05 * rng.standard_normal(positions.shape)


def spring_chain():
    rng = np.random.default_rng(2)
    return np.arange(6.0) + 0.1 * rng.standard_normal(6)


def report(name, analytic, numeric):
    error = np.max(np.abs(analytic - numeric)) / np.max(np.abs(numeric))
    print(f"{name}: max relative difference from central differences {error:.2e}")
    return error


def main():
    np.set_printoptions(precision=6, suppress=True)

    positions = lennard_jones_cluster()
    forces = -tp.grad(lj_energy)(positions)
    numeric = -central_difference(lj_energy, positions)
    print(f"Lennard-Jones cluster of {len(positions)} atoms, energy {lj_energy(positions):.6f}")
    print("forces = -tp.grad(lj_energy)(positions):")
    print(forces)
    print("net force (should vanish):", forces.sum(axis=0))
    report("LJ forces", forces, numeric)

    x0 = spring_chain()
    k, rest = 2.0, 1.0
    forces = -tp.grad(chain_energy)(x0, k, rest)
    print(f"\nSpring chain of {len(x0)} masses, energy {chain_energy(x0, k, rest):.6f}")
    print("forces = -tp.grad(chain_energy)(x0, k, rest):", forces)
    print("spring_forces(x0, k, rest):                  ", spring_forces(x0, k, rest))
    report("chain forces", forces, -central_difference(lambda x: chain_energy(x, k, rest), x0))

    dt, steps = 0.05, 40
    sensitivity = tp.grad(final_kinetic_energy)(x0, k, rest, dt, steps)
    print(
        f"\nVelocity Verlet, {steps} steps of {dt}: final kinetic energy "
        f"{final_kinetic_energy(x0, k, rest, dt, steps):.6f}"
    )
    print("d(kinetic energy)/d(x0):", sensitivity)
    report(
        "trajectory sensitivity",
        sensitivity,
        central_difference(lambda x: final_kinetic_energy(x, k, rest, dt, steps), x0),
    )


if __name__ == "__main__":
    main()
