/**
 * @file pimd_step.h
 * @brief One ring-polymer MD time step over the beads a partition holds: the configured
 *        splitting (OBABO or BAOAB), centre-of-mass removal, the barostat's cell steps,
 *        the forces on the normal modes, and the output vector of estimators.
 *
 * The kernels of aisci/pimd.h act on one mode or bead; this layer runs them in the order
 * the integrator names, for the K beads (and modes) first_bead .. first_bead + K - 1 of a
 * partition (K = beads_per_world). The caller keeps the per-atom storage and the exchanges
 * of whole beads between partitions (aisci/beadcomm.h); the step reduces small sums
 * itself: within the partition (@p world) for the centre of mass, over all partitions
 * (the exchange's universe) for the cell and the estimators.
 *
 * One time step, as the caller drives it:
 *   aisci_pimd_step_begin()        O B A (OBABO) or B A O A (BAOAB), cell kicks; the box
 *                                  scalings the caller applies
 *   [exchange the modes]           aisci_pimd_step_positions(): Cartesian beads, centroids
 *   [forces of the local beads, exchanged]
 *   aisci_pimd_step_forces()       forces on the modes (or springs), virial sums
 *   aisci_pimd_step_end()          B O (OBABO) or B, cell kick
 *   aisci_pimd_step_output()       the output vector, on steps that measure
 * Layouts: per-atom rows with a stride and an optional index list (::aisci_pimd_rows), so
 * that the caller's arrays are used in place, for all its atoms or a group of them; masses
 * and tags are contiguous, one per ring-polymer atom.
 * @since 0.1.0
 */
#ifndef AISCI_PIMD_STEP_H
#define AISCI_PIMD_STEP_H

#include <mpi.h>
#include <stdint.h>

#include "aisci/beadcomm.h"
#include "aisci/pimd.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * n rows of 3 values: component d of atom i is data[r * stride + d] (stride >= 3), with
 * r = i, or r = index[i] when @p index is given. An index list picks the atoms of a group
 * out of the caller's per-atom arrays in place (fix pimd/langevin on a group: only those
 * atoms are ring polymers); NULL means every row 0..n-1.
 * @since 0.1.0 (index: 0.6)
 */
typedef struct aisci_pimd_rows {
  double *data;
  int stride;
  const int *index; /**< n row numbers, or NULL */
} aisci_pimd_rows;

/**
 * The local atoms and the K local beads of a partition. Arrays of K rows, index l for
 * bead/mode first_bead + l:
 * - q: unwrapped normal-mode coordinates (nmpimd) or the bead's positions (pimd, K = 1);
 * - v: velocities of the modes (nmpimd) or of the bead (pimd);
 * - f: forces on the modes, written by aisci_pimd_step_forces() (nmpimd), or the bead's
 *      forces, to which the springs are added (pimd).
 */
typedef struct aisci_pimd_local {
  int n;               /**< local ring-polymer atoms (rows of q, v, f; masses, tags) */
  const double *mass;  /**< n physical masses */
  const int64_t *tags; /**< n atom IDs (the thermostat noise is drawn by ID) */
  aisci_pimd_rows *q;  /**< K rows */
  aisci_pimd_rows *v;  /**< K rows */
  aisci_pimd_rows *f;  /**< K rows */
} aisci_pimd_local;

/** The step's state that a restart file must keep (noise counter, cell) and the cell's
 *  virial share from the last forces. Zero-initialise for a new run. */
typedef struct aisci_pimd_state {
  uint64_t noise_counter; /**< thermostat half-step counter */
  aisci_pimd_cell cell;   /**< cell momenta (NPH/NPT) */
  double cell_virial[3];  /**< this rank's share of the centroid virial per direction */
} aisci_pimd_state;

/** Box scalings of one begin step, applied in order: edges L_d *= factor[s][d]. */
typedef struct aisci_pimd_box_scaling {
  int count; /**< 0, 1 or 2 */
  double factor[2][3];
} aisci_pimd_box_scaling;

/** Values a partition measured for each local bead on a measuring step. */
typedef struct aisci_pimd_bead_measure {
  double potential; /**< potential energy of the bead (summed over the partition) */
  double virial[3]; /**< diagonal of its potential virial W (energy units, summed over the
                         partition) */
} aisci_pimd_bead_measure;

/** Opaque step driver (with its scratch buffers). */
typedef struct aisci_pimd_step aisci_pimd_step;

/**
 * Build the step driver for beads first_bead .. first_bead + nlocal_beads - 1.
 * @param pimd the integrator (borrowed, must outlive the step)
 * @param fixcom 1: remove the centroid's centre-of-mass velocity after each O step
 * @param world the partition's communicator; @param universe all partitions' ranks
 * @param bc the bead exchange (borrowed): its universe sums carry the cell and estimators
 * @return AISCI_ERR_ARG for NULL pointers, K < 1, beads outside 0..P-1, or K > 1 with
 *         method pimd.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_pimd_step_create(const aisci_pimd *pimd, int nlocal_beads,
                                              int first_bead, int fixcom, MPI_Comm world,
                                              MPI_Comm universe, aisci_beadcomm *bc,
                                              aisci_pimd_step **step);

/** Free the step driver; NULL is allowed. @since 0.1.0 */
AISCI_API void aisci_pimd_step_destroy(aisci_pimd_step *step);

/** Largest number of output values (ensemble NPH/NPT with aniso). */
#define AISCI_PIMD_MAXVALUES 17

/**
 * The output vector's layout for a configuration: *nvalues = 10 (NVE/NVT), 15 (NPH/NPT
 * iso) or 17 (aniso), and extensive[i] = 1 for the values that scale with the number of
 * atoms (energies, kinetic estimators), 0 for the others (pressures, strain rates).
 * @return AISCI_ERR_ARG for NULL arguments.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_pimd_output_layout(const aisci_pimd_config *config, int *nvalues,
                                                int extensive[AISCI_PIMD_MAXVALUES]);

/**
 * First part of a time step (cfg.dt), up to new positions: OBABO: O(dt/2) [cell noise,
 * COM removal], cell kick(dt/2), B(dt/2), A(dt); BAOAB: cell kick(dt/2), B(dt/2), A(dt/2),
 * O(dt), A(dt/2). With a barostat the centroid moves with the cell, and @p box receives
 * the scalings of the box to apply after the call (otherwise box->count = 0).
 * Collective over the universe (COM within the partition, cell over all).
 * @param volume the current box volume (for the cell kick)
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_pimd_step_begin(aisci_pimd_step *step, const aisci_pimd_local *local,
                                             aisci_pimd_state *state, double volume,
                                             aisci_pimd_box_scaling *box);

/**
 * Cartesian positions of the local beads from all P modes (nmpimd): beads[l] =
 * sum_k C[first_bead + l][k] modes_k (unwrapped), and the centroids q_0 / sqrt(P) into
 * @p centroid. Rows with data NULL are skipped (not wanted); with every bead skipped only
 * the first block of @p modes (the centroid mode) is read. @p modes: P blocks of n x 3.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_pimd_step_positions(aisci_pimd_step *step, int n, const double *modes,
                                                 const aisci_pimd_rows *beads,
                                                 aisci_pimd_rows centroid);

/**
 * Forces on the local modes and the virial sums, after every bead's forces were
 * exchanged (@p bead_forces: P blocks of n x 3 Cartesian forces; nmpimd), or the springs
 * of the local bead (pimd; @p bead_positions: P blocks of unwrapped positions, and the
 * centroids are written to @p centroid). Sums are made when @p measure (for the output
 * vector, with the per-atom centroid-virial shares into @p per_atom, n values or NULL) or
 * when a barostat needs the cell virial (state->cell_virial). @p measured holds each local
 * bead's potential virial (for the cell: the partition's rank 0 passes them, other
 * ranks zeros; may be NULL without a barostat).
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_pimd_step_forces(aisci_pimd_step *step, const aisci_pimd_local *local,
                                              aisci_pimd_state *state, const double *bead_forces,
                                              const double *bead_positions,
                                              const aisci_pimd_bead_measure *measured, int measure,
                                              double *per_atom, aisci_pimd_rows centroid);

/**
 * Last part of a time step: B(dt/2), cell kick(dt/2), then O(dt/2) for OBABO.
 * Collective over the universe.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_pimd_step_end(aisci_pimd_step *step, const aisci_pimd_local *local,
                                           aisci_pimd_state *state, double volume);

/**
 * The output vector (aisci_pimd_output_layout() values) on a measuring step: the local
 * beads' kinetic, spring and potential energies (entries 0-2, summed over the partition's
 * beads), total energy, the three kinetic and three pressure estimators
 * (aisci_pimd_estimators()), and with a barostat the strain rate(s), cell kinetic,
 * potential and Jacobian energies and the conserved quantity. @p measured: the local
 * beads' potential energy and virial trace (the partition's rank 0 passes them, others
 * zeros). @p bead_velocities: P blocks of n x 3 bead velocities (pimd only, for the
 * centroid kinetic energy; NULL for nmpimd). Collective over the universe.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_pimd_step_output(aisci_pimd_step *step, const aisci_pimd_local *local,
                                              const aisci_pimd_state *state,
                                              const aisci_pimd_bead_measure *measured,
                                              const double *bead_velocities, double natoms,
                                              double volume, double nktv2p, double *out);

#ifdef __cplusplus
}
#endif
#endif
