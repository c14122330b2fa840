"""Reference electrostatics of DPLR in numpy: periodic Gaussian charges by an Ewald
reciprocal-space sum (no mesh, no real-space part).

This is the energy that ``kspace_style pppm/dplr`` (and the core PPPM with beta > 0 and
no real-space split, include/aisci/pppm.h) approximates, written out directly so that
tests and the label generator of potentials/dplr have an independent reference.

Convention (the same as the core's, docs/dplr.md): every charge q_i is a normalised
Gaussian whose pair kernel is erf(beta r) / r. For a periodic cell of volume V,

    E = qqrd2e [ (2 pi / V) sum_{k != 0} exp(-k^2 / (4 beta^2)) / k^2 |S(k)|^2
                 - beta / sqrt(pi) sum_i q_i^2
                 - pi (sum_i q_i)^2 / (2 V beta^2) ]

with S(k) = sum_j q_j exp(i k . r_j) over the reciprocal lattice vectors k = 2 pi m B
(B = inverse transpose of the cell). The second term removes the self-energy of each
Gaussian (a constant for fixed charges), the third is the uniform neutralising
background (zero for a neutral cell). This equals the sum over all pairs and periodic
images of q_i q_j erf(beta r) / r, the interaction of the Gaussians without their
self-interaction.

Forces F_i = -dE/dr_i and the virial W_ab = -dE/d(strain_ab) (W = sum r F convention,
energy units) are exact derivatives of the truncated sum.

Units are the caller's: positions in Angstrom and charges in e with qqrd2e = 14.399645
give eV (LAMMPS metal units).
"""

import math

import numpy as np

QQRD2E_METAL = 14.399645  # eV A / e^2, the value of LAMMPS's units metal


def reciprocal_vectors(cell, beta, tolerance=1e-14):
    """All reciprocal lattice vectors k != 0 of ``cell`` (lattice vectors as rows) with
    exp(-k^2 / (4 beta^2)) >= tolerance, one of each pair +k / -k. Returns (K [M, 3],
    k^2 [M])."""
    cell = np.asarray(cell, dtype=float)
    if beta <= 0.0:
        raise ValueError("ewald: beta must be > 0, got %r" % (beta,))
    recip = 2.0 * math.pi * np.linalg.inv(cell).T  # rows b_i with a_i . b_j = 2 pi delta
    kmax = 2.0 * beta * math.sqrt(-math.log(tolerance))
    # |m_i| <= kmax |a_i| / (2 pi) covers every k with |k| <= kmax
    mmax = [int(math.ceil(kmax * np.linalg.norm(cell[i]) / (2.0 * math.pi))) for i in range(3)]
    r = [np.arange(-m, m + 1) for m in mmax]
    m = np.stack(np.meshgrid(*r, indexing="ij"), axis=-1).reshape(-1, 3)
    # half space: first non-zero component positive
    keep = (m[:, 0] > 0) | ((m[:, 0] == 0) & (m[:, 1] > 0)) | \
           ((m[:, 0] == 0) & (m[:, 1] == 0) & (m[:, 2] > 0))
    k = m[keep] @ recip
    k2 = np.einsum("ij,ij->i", k, k)
    sel = k2 <= kmax * kmax
    return k[sel], k2[sel]


def gaussian_ewald(positions, charges, cell, beta, qqrd2e=QQRD2E_METAL, tolerance=1e-14,
                   chunk=2048):
    """Energy, forces [N, 3] and virial [3, 3] of periodic Gaussian charges (module doc).

    positions [N, 3], charges [N], cell [3, 3] (rows a, b, c), beta > 0 (1/length).
    """
    x = np.asarray(positions, dtype=float)
    q = np.asarray(charges, dtype=float)
    cell = np.asarray(cell, dtype=float)
    volume = abs(np.linalg.det(cell))
    k, k2 = reciprocal_vectors(cell, beta, tolerance)
    energy = 0.0
    forces = np.zeros_like(x)
    virial = np.zeros((3, 3))
    for start in range(0, len(k2), chunk):
        kc, k2c = k[start:start + chunk], k2[start:start + chunk]
        a = np.exp(-k2c / (4.0 * beta * beta)) / k2c          # A(k)
        phase = x @ kc.T                                       # [N, M]
        c, s = np.cos(phase), np.sin(phase)
        sr, si = q @ c, q @ s                                  # S(k) = sr + i si
        s2 = sr * sr + si * si
        # factor 2: the sum runs over one k of each +k / -k pair
        pref = 2.0 * 2.0 * math.pi / volume
        energy += pref * np.sum(a * s2)
        # F_i = (4 pi / V) q_i sum_k A k Im[e^{i k r_i} S*(k)], doubled for the half space
        im = s * sr[None, :] - c * si[None, :]
        forces += 2.0 * (4.0 * math.pi / volume) * q[:, None] * ((im * a[None, :]) @ kc)
        # W_ab = (2 pi / V) sum_k A |S|^2 (delta_ab - 2 k_a k_b (1/k^2 + 1/(4 beta^2)))
        w = a * s2 * pref
        virial += np.sum(w) * np.eye(3)
        virial -= np.einsum("m,ma,mb->ab", w * 2.0 * (1.0 / k2c + 1.0 / (4.0 * beta * beta)),
                            kc, kc)
    qsum, q2sum = float(np.sum(q)), float(np.sum(q * q))
    e_self = -beta / math.sqrt(math.pi) * q2sum
    e_background = -math.pi * qsum * qsum / (2.0 * volume * beta * beta)
    energy += e_self + e_background
    virial += e_background * np.eye(3)
    return qqrd2e * energy, qqrd2e * forces, qqrd2e * virial
