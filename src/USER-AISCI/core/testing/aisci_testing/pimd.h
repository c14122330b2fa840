/**
 * @file aisci_testing/pimd.h
 * @brief Kernels of the PIMD time step (normal modes, splitting steps, thermostat, barostat, estimators) that aisci_pimd_step composes.
 *
 * Not part of the public API (testing/README.md): exported by libaisci_core for its
 * tests and the ctypes harness, not installed, no compatibility promise.
 */
#ifndef AISCI_TESTING_PIMD_H
#define AISCI_TESTING_PIMD_H

#include "aisci/pimd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* -- declarations -- */
/** The configuration the integrator was built with. */
AISCI_API const aisci_pimd_config *aisci_pimd_get_config(const aisci_pimd *pimd);

/** Orthonormal normal-mode matrix, P x P row-major: C[j * P + k]. */
AISCI_API aisci_status aisci_pimd_nm_matrix(int nbeads, double *C);

/**
 * Eigenvalue lambda_k = 4 sin^2(pi k / P) of the ring's spring matrix into *lambda.
 * @return AISCI_ERR_ARG for P < 1, k outside 0..P-1 or a NULL output.
 */
AISCI_API aisci_status aisci_pimd_lambda(int nbeads, int k, double *lambda);

/** omega_P = P kT / hbar (1 / time units). AISCI_ERR_ARG for NULL arguments. */
AISCI_API aisci_status aisci_pimd_omega_p(const aisci_pimd *pimd, double *omega_p);

/** Fictitious mass of mode k divided by the physical mass. AISCI_ERR_ARG for NULL arguments
 *  or k outside 0..P-1 (as the next two). */
AISCI_API aisci_status aisci_pimd_mass_factor(const aisci_pimd *pimd, int k, double *factor);

/** Free ring-polymer frequency Omega_k of mode k (0 for the centroid). */
AISCI_API aisci_status aisci_pimd_mode_frequency(const aisci_pimd *pimd, int k, double *omega);

/** PILE-L friction gamma_k of mode k (1 / time units). */
AISCI_API aisci_status aisci_pimd_friction(const aisci_pimd *pimd, int k, double *gamma);

/** Bead j of n x 3 values from all modes: out = sum_k C[j][k] modes_k. */
AISCI_API aisci_status aisci_pimd_to_bead(const aisci_pimd *pimd, int j, int n,
                                          const double *modes, double *out);

/**
 * B step (b_step): v += h * ftm2v * f / M_k for n atoms of mode (or bead) k.
 * @param mass physical masses (n); @param f forces on mode k (n x 3).
 */
AISCI_API aisci_status aisci_pimd_b_step(const aisci_pimd *pimd, int k, int n, const double *mass,
                                         const double *f, double *v, double h);

/**
 * A step (a_step): exact propagation of the free ring-polymer mode k over time h
 * (a harmonic rotation with Omega_k; a drift for the centroid or in Cartesian mode).
 */
AISCI_API aisci_status aisci_pimd_a_step(const aisci_pimd *pimd, int k, int n, double *q, double *v,
                                         double h);

/**
 * O step (o_step): PILE-L Ornstein-Uhlenbeck update of mode k over time h:
 * v = c1 v + c2 sqrt(P kT / (M_k mvv2e)) xi, c1 = exp(-gamma_k h), c2 = sqrt(1 - c1^2).
 * The Gaussian xi for atom tag t, component d is drawn from the counter
 * (t, k, counter), so results do not depend on how atoms are distributed over ranks.
 * In Cartesian mode every bead gets friction 1/tau.
 */
AISCI_API aisci_status aisci_pimd_o_step(const aisci_pimd *pimd, int k, int n, const int64_t *tags,
                                         const double *mass, double *v, double h, uint64_t counter);

/** Kinetic energy sum_i M_k v_i^2 / 2 (energy units) of mode or bead k into *kinetic.
 *  AISCI_ERR_ARG as the splitting steps, or for a NULL output. */
AISCI_API aisci_status aisci_pimd_kinetic(const aisci_pimd *pimd, int k, int n, const double *mass,
                                          const double *v, double *kinetic);

/** Spring energy of normal mode k: mvv2e sum_i m_i omega_P^2 lambda_k |q_i|^2 / 2 (energy
 *  units) into *energy. */
AISCI_API aisci_status aisci_pimd_spring_mode(const aisci_pimd *pimd, int k, int n,
                                              const double *mass, const double *q, double *energy);

/**
 * Cartesian springs for bead j (method pimd): adds the spring force
 * -mvv2e m_i omega_P^2 (2 x_ij - x_i,j-1 - x_i,j+1) to f (energy / length units, i.e. force
 * units when force = energy / length as in LAMMPS; ftm2v plays no part) and returns the
 * energy of the spring between beads j and j+1, mvv2e sum_i m_i omega_P^2 |x_ij - x_i,j+1|^2 / 2
 * (energy units) in *energy. @p beads holds all P beads (bead j's block starts at
 * beads + j * 3n); @p f (n x 3, bead j only) may be NULL. P = 1: no springs, energy 0.
 * AISCI_ERR_ARG on bad arguments.
 */
AISCI_API aisci_status aisci_pimd_spring_bead(const aisci_pimd *pimd, int j, int n,
                                              const double *mass, const double *beads, double *f,
                                              double *energy);

/**
 * The NVE/NVT output vector for bead/mode @p k from the sums of all P beads:
 * [0] kinetic_k, [1] spring_k, [2] potential_k, [3] total energy,
 * [4] primitive KE 3NPkT/2 - sum spring / P, [5] virial KE -sum xf / (2P),
 * [6] centroid-virial KE 3NkT/2 - sum xcf / (2P),
 * [7] primitive pressure (2 [4] + mean W) / (3V), [8] thermodynamic pressure
 * (2 K_c + mean W - sum xcf / P) / (3V) with K_c = @p kinetic_centroid (the instantaneous
 * pressure the barostat acts on), [9] centroid-virial pressure (2 [6] + mean W) / (3V),
 * all times nktv2p.
 */
AISCI_API aisci_status aisci_pimd_estimators(const aisci_pimd *pimd, int k,
                                             const aisci_pimd_bead_sums *sums, double natoms,
                                             double kinetic_centroid, double volume,
                                             double nktv2p, double out[AISCI_PIMD_NVALUES]);

/**
 * Virial sums of normal mode k (method nmpimd) from its coordinates q and forces f
 * (n x 3, the forces on the mode): *xf = sum_i q_i . f_i. For k >= 1 also the centroid
 * virial's shares, accumulated: per_atom[i] += q_i . f_i and minus_qf[d] -=
 * sum_i q_id f_id (either may be NULL); mode 0 is the centroid and adds nothing to them.
 */
AISCI_API aisci_status aisci_pimd_mode_virial(const aisci_pimd *pimd, int k, int n,
                                              const double *q, const double *f,
                                              double *per_atom, double minus_qf[3], double *xf);

/**
 * Virial sums of one Cartesian bead (method pimd) with its physical forces f (before the
 * springs are added): *xf = sum_i x_i . f_i and *xcf = sum_i (x_i - xc_i) . f_i, where
 * x (n x 3) are the bead's unwrapped positions and xc_i = mode0_i / sqrt(P) the centroid
 * (mode0 from aisci_pimd_to_mode() with k = 0); per_atom[i] = (x_i - xc_i) . f_i
 * (overwritten, or NULL).
 */
AISCI_API aisci_status aisci_pimd_bead_virial(const aisci_pimd *pimd, int n, const double *x,
                                              const double *mode0, const double *f,
                                              double *per_atom, double *xf, double *xcf);

/** Per-direction sum_i M_k v_id^2 * mvv2e of mode k (twice the kinetic energy, energy units). */
AISCI_API aisci_status aisci_pimd_kinetic_tensor(const aisci_pimd *pimd, int k, int n,
                                                 const double *mass, const double *v, double out[3]);

/** Cell mass W (energy * time^2 units) into *mass. AISCI_ERR_ARG for NULL arguments.
 *  */
AISCI_API aisci_status aisci_pimd_cell_mass(const aisci_pimd *pimd, double *mass);

/**
 * Force on the cell momenta from universe-summed sums (see above):
 * @param kin2 sum_i M_0 v_0id^2 * mvv2e per direction (energy units)
 * @param vir  sum_j [W_j,dd - sum_i (x - xc)_d f_d] per direction (energy units)
 * @param force output, per direction (ISO: force[0] only)
 */
AISCI_API aisci_status aisci_pimd_cell_force(const aisci_pimd *pimd, const double kin2[3],
                                             const double vir[3], double volume, double force[3]);

/** Cell B step: p += h * force. */
AISCI_API aisci_status aisci_pimd_cell_b_step(const aisci_pimd *pimd, aisci_pimd_cell *cell,
                                              const double force[3], double h);

/** Cell O step (NPT with BZP): Langevin on p with friction 1/taup at P T. */
AISCI_API aisci_status aisci_pimd_cell_o_step(const aisci_pimd *pimd, aisci_pimd_cell *cell,
                                              double h, uint64_t counter);

/** Strain rates alpha_d = p_d / W per direction. */
AISCI_API aisci_status aisci_pimd_cell_rates(const aisci_pimd *pimd, const aisci_pimd_cell *cell,
                                             double alpha[3]);

/**
 * A step of the centroid under strain rates alpha over time h: the exact solution of
 * dq/dt = v + a q, dv/dt = -(a + e) v per direction (a = alpha_d; e = 0 for BZP,
 * e = (alpha_x + alpha_y + alpha_z) / N_f for MTTK):
 * v = v e^{-(a + e) h}, q = q e^{a h} + v e^{a h} (1 - e^{-(2a + e) h}) / (2a + e)
 * (= q e^{a h} + v sinh(a h) / a for BZP).
 * The caller scales the box edges by e^{alpha_d h}.
 */
AISCI_API aisci_status aisci_pimd_cell_a_centroid(const aisci_pimd *pimd, const double alpha[3],
                                                  int n, double *q0, double *v0, double h);

/**
 * Cell energies: out[0] kinetic sum p_d^2 / (2W), out[1] potential P p_ext V,
 * out[2] Jacobian term (BZP: -P kT ln V; MTTK: 0).
 */
AISCI_API aisci_status aisci_pimd_cell_energies(const aisci_pimd *pimd,
                                                const aisci_pimd_cell *cell, double volume,
                                                double out[3]);


#ifdef __cplusplus
}
#endif
#endif
