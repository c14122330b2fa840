/**
 * @file pimd.h
 * @brief Ring-polymer (path-integral) molecular dynamics: normal modes, the free
 *        ring-polymer propagator, the PILE-L Langevin thermostat and quantum estimators.
 *
 * Conventions (all documented in docs/fix_pimd_langevin.md):
 * - P beads sample the quantum canonical ensemble at temperature T through the
 *   classical ring polymer at temperature P*T: H = sum_j [ p_j^2/(2 M) + V(x_j) ]
 *   + sum_j (1/2) m omega_P^2 (x_j - x_{j+1})^2, with omega_P = P kT / hbar.
 * - Normal modes are orthonormal: q_k = sum_j C[j][k] x_j, x_j = sum_k C[j][k] q_k,
 *   with C[j][0] = 1/sqrt(P) (the centroid is q_0 / sqrt(P)) and eigenvalues
 *   lambda_k = 4 sin^2(pi k / P) of the ring's spring matrix.
 * - Fictitious masses: fmmode physical: M_k = fmass m; normal: M_k = fmass lambda_k m
 *   for k > 0 and M_0 = fmass m. The free-polymer frequency of mode k is
 *   Omega_k = omega_P sqrt(lambda_k m / M_k).
 * - PILE-L friction: gamma_0 = 1/tau, gamma_k = 2 scale Omega_k (k > 0).
 * - Arrays of n atoms x 3 components are row-major (atom-major), lengths in the
 *   caller's units; all unit factors come in through ::aisci_pimd_config.
 * The core has no notion of MPI partitions: callers pass the mode index k they own.
 * @since 0.1.0
 */
#ifndef AISCI_PIMD_H
#define AISCI_PIMD_H

#include <stdint.h>

#include "aisci/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Coordinates in which the ring polymer is integrated. */
typedef enum aisci_pimd_method {
  AISCI_PIMD_NMPIMD = 0, /**< normal modes, exact free ring-polymer propagation */
  AISCI_PIMD_CARTESIAN = 1 /**< bead (Cartesian) coordinates, springs as forces ("pimd") */
} aisci_pimd_method;

/** Trotter splitting of one time step. */
typedef enum aisci_pimd_integrator {
  AISCI_PIMD_OBABO = 0, /**< O(dt/2) B(dt/2) A(dt) [force] B(dt/2) O(dt/2) */
  AISCI_PIMD_BAOAB = 1  /**< B(dt/2) A(dt/2) O(dt) A(dt/2) [force] B(dt/2) */
} aisci_pimd_integrator;

/** Statistical ensemble. */
typedef enum aisci_pimd_ensemble {
  AISCI_PIMD_NVE = 0, /**< constant energy */
  AISCI_PIMD_NVT = 1, /**< PILE-L thermostat */
  AISCI_PIMD_NPH = 2, /**< barostat, no thermostat */
  AISCI_PIMD_NPT = 3  /**< barostat and thermostats */
} aisci_pimd_ensemble;

/** Barostat equations (constant-pressure ensembles only). */
typedef enum aisci_pimd_barostat {
  AISCI_PIMD_BZP = 0, /**< Bussi-Zykova-Parrinello: Jacobian force 3 P kT, Langevin cell in NPT */
  AISCI_PIMD_MTTK = 1 /**< Martyna-Tuckerman-Tobias-Klein: kinetic Jacobian force, no cell noise */
} aisci_pimd_barostat;

/** Cell degrees of freedom driven by the barostat. */
typedef enum aisci_pimd_pstyle {
  AISCI_PIMD_ISO = 0,  /**< one strain rate for x, y, z */
  AISCI_PIMD_ANISO = 1 /**< independent strain rates for x, y, z */
} aisci_pimd_pstyle;

/** Fictitious-mass preconditioning. */
typedef enum aisci_pimd_fmmode {
  AISCI_PIMD_FM_PHYSICAL = 0, /**< M_k = fmass * m */
  AISCI_PIMD_FM_NORMAL = 1    /**< M_k = fmass * lambda_k * m (k > 0) */
} aisci_pimd_fmmode;

/** Everything the core needs, including all unit factors. */
typedef struct aisci_pimd_config {
  int nbeads;                        /**< P >= 1 */
  aisci_pimd_method method;          /**< default NMPIMD */
  aisci_pimd_integrator integrator;  /**< default OBABO */
  aisci_pimd_ensemble ensemble;      /**< default NVT */
  aisci_pimd_fmmode fmmode;          /**< default PHYSICAL */
  double fmass;                      /**< fictitious-mass factor > 0, default 1 */
  double scale;                      /**< PILE-L non-centroid friction factor > 0, default 1 */
  double kT;                         /**< k_B T of the physical system (energy units) > 0 */
  double hbar;                       /**< reduced Planck constant (energy * time units) > 0 */
  double dt;                         /**< time step (time units) > 0 */
  double tau;                        /**< centroid thermostat time (time units) > 0 */
  uint64_t seed;                     /**< thermostat seed > 0 */
  double mvv2e;                      /**< mass * velocity^2 to energy */
  double ftm2v;                      /**< force / mass * time to velocity */
  /* constant pressure (ensemble NPH/NPT only) */
  aisci_pimd_barostat barostat;      /**< default BZP */
  aisci_pimd_pstyle pstyle;          /**< default ISO */
  double pext;                       /**< external pressure (energy / volume units) */
  double taup;                       /**< barostat time (time units) > 0, default 1 */
  double natoms;                     /**< number of atoms (sets the cell mass) */
} aisci_pimd_config;

/** Opaque integrator state. */
typedef struct aisci_pimd aisci_pimd;

/** A configuration with the documented defaults (kT, hbar, dt, unit factors = 1). @since 0.1.0 */
AISCI_API aisci_pimd_config aisci_pimd_config_default(void);

/** Validate @p config and build the integrator (coefficients computed once). @since 0.1.0 */
AISCI_API aisci_status aisci_pimd_create(const aisci_pimd_config *config, aisci_pimd **pimd);

/** Free the integrator; NULL is allowed. @since 0.1.0 */
AISCI_API void aisci_pimd_destroy(aisci_pimd *pimd);

/**
 * Change the time step (LAMMPS's reset_dt): the splitting steps of aisci/pimd_step.h use
 * config.dt. @return AISCI_ERR_ARG for a NULL integrator or dt not finite and > 0. @since 0.1.0
 */
AISCI_API aisci_status aisci_pimd_set_dt(aisci_pimd *pimd, double dt);

/**
 * Mode k of n x 3 values from all beads: out = sum_j C[j][k] beads_j, where bead j's
 * block starts at beads + j * 3n.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_pimd_to_mode(const aisci_pimd *pimd, int k, int n,
                                          const double *beads, double *out);

/** Per-bead (or per-mode) sums that the estimators are built from. */
typedef struct aisci_pimd_bead_sums {
  double kinetic;   /**< kinetic energy of the mode/bead with fictitious masses */
  double spring;    /**< spring energy attributed to this mode/bead */
  double potential; /**< potential energy of the bead */
  double xf;        /**< sum_i x_i . f_i (mode or unwrapped bead coordinates) */
  double xcf;       /**< sum_i (x_i - centroid_i) . f_i */
  double virial;    /**< trace of the bead's potential virial W (energy units) */
} aisci_pimd_bead_sums;

/** Number of values in the NVE/NVT output vector. */
#define AISCI_PIMD_NVALUES 10

/**
 * Do the normal modes reproduce bead j's positions x (n x 3)? *agree = 1 if every
 * coordinate of aisci_pimd_to_bead(j, modes) is within rtol (1 + |x|) of x, else 0 (e.g.
 * to keep the modes of a previous run unless the atoms were moved). @since 0.1.0
 */
AISCI_API aisci_status aisci_pimd_modes_reproduce(const aisci_pimd *pimd, int j, int n,
                                                  const double *modes, const double *x,
                                                  double rtol, int *agree);

/**
 * Per-atom centroid-virial kinetic energy 3kT/2 - c_i / (2P), c_i = sum over the nparts
 * partitions of their shares of sum_j (x_ij - xc_i) . f_ij (shares: nparts blocks of n,
 * e.g. from aisci_beadcomm_allgather()), written to out[i * stride] (energy units).
 * @return AISCI_OK; AISCI_ERR_ARG for NULL pimd, n < 0, nparts < 1, stride < 1 or NULL
 *         arrays (n > 0). @since 0.1.0
 */
AISCI_API aisci_status aisci_pimd_peratom_kinetic(const aisci_pimd *pimd, int n, int nparts,
                                                  const double *shares, double *out, int stride);

/**
 * @name Barostat (ensembles NPH and NPT; method nmpimd)
 * The cell is coupled to the ring-polymer centroids only (internal modes are not
 * scaled). With strain rate alpha_d = p_d / W (per direction d; all equal for ISO) the
 * centroid obeys dq_0/dt = v_0 + alpha q_0, dv_0/dt = F_0 / M_0 - alpha v_0, the box
 * edges L_d grow as exp(alpha_d t), and
 *   dp_d/dt = V (Pi_dd - P p_ext) + J      (ANISO; ISO sums the three and uses 3 V, 3 J)
 * where, in the ring polymer's (P T) energy scale,
 *   V Pi_dd = sum_i M_0 v_0id^2 + sum_j [ W_j,dd - sum_i (x_ij - xc_i)_d f_ijd ]
 * (centroid kinetic term plus the centroid virial of all beads). BZP: J = P kT, c = 1;
 * MTTK: J = sum_i M_0 |v_0i|^2 / N_f (N_f = 3N) and the velocities are damped at the extra
 * rate (alpha_x + alpha_y + alpha_z) / N_f (so ISO: dv_0/dt = ... - (1 + 3/N_f) alpha v_0).
 * The cell mass is W = 3 N P kT (taup / 2 pi)^2 (ISO and per direction for ANISO).
 * In NPT the cell momentum gets a Langevin step with friction 1 / taup (BZP).
 * Conserved in NPH: E_rp + sum_d p_d^2 / (2W) + P p_ext V - J-term, where the Jacobian
 * term is P kT ln V for BZP and 0 for MTTK.
 * @{
 */

/** Cell momentum state (p[0] only for ISO). Zero-initialise for a new run. */
typedef struct aisci_pimd_cell {
  double p[3]; /**< cell momenta (mass * 1/time units) */
} aisci_pimd_cell;

/** @} */

#ifdef __cplusplus
}
#endif
#endif
