/**
 * @file beadcomm.h
 * @brief Inter-partition exchange of per-atom bead data for path-integral MD.
 *
 * Each LAMMPS partition (world) holds one bead of every atom, spatially decomposed
 * over the world's ranks. Ranks with the same world rank form a "column" across the
 * P partitions. aisci_beadcomm_allgather() gives every rank, for each of its local
 * atoms, the values of that atom in all P beads: one Allgatherv in the column, plus a
 * point-to-point fix-up (planned once per change of the atom sets) for the few atoms
 * that another bead's column peer does not own because a bead sits across a subdomain
 * boundary. Atoms are matched by tag, so no partition needs the same atom order.
 * All calls that communicate are collective over the universe communicator.
 * @since 0.1.0
 */
#ifndef AISCI_BEADCOMM_H
#define AISCI_BEADCOMM_H

#include <mpi.h>
#include <stdint.h>

#include "aisci/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aisci_beadcomm aisci_beadcomm;

/**
 * Build the exchange for bead @p bead (0..nbeads-1) whose partition communicator is
 * @p world, inside @p universe (all partitions). Collective over @p universe. Fails with
 * AISCI_ERR_MPI if the partitions have different numbers of ranks or the bead indices
 * are not a permutation of 0..nbeads-1.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_beadcomm_create(MPI_Comm universe, MPI_Comm world, int nbeads,
                                             int bead, aisci_beadcomm **out);

/** Free the exchange and its communicators; NULL is allowed. Not collective. @since 0.1.0 */
AISCI_API void aisci_beadcomm_destroy(aisci_beadcomm *bc);

/**
 * Declare the local atoms (n tags, in local order). Call whenever the local atom set or
 * order may have changed (after reneighboring). Local: the next allgather replans.
 * AISCI_ERR_ARG (naming the tag) if a tag appears twice in @p tags; the previous atom set
 * is then kept.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_beadcomm_set_atoms(aisci_beadcomm *bc, int n, const int64_t *tags);

/**
 * For each local atom, gather @p width doubles from every bead.
 * @param mine n x width values of this bead, local order.
 * @param all  output, nbeads blocks of n x width: block j holds bead j's values of the
 *             local atoms, in local order.
 * Collective over the universe. AISCI_ERR_MISSING, on every rank and with the same message
 * naming the atom and the partition, if some partition lacks an atom that another holds
 * (see aisci_beadcomm_missing()); AISCI_ERR_MPI on every rank if the plan failed on some
 * rank for another reason.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_beadcomm_allgather(aisci_beadcomm *bc, int width, const double *mine,
                                                double *all);

/**
 * aisci_beadcomm_allgather() that also gives the smallest and largest @p flag passed by
 * the ranks of the universe (same values on every rank), at no extra collective: e.g. to
 * check that all partitions take the same branch before a collective that only some
 * would call. @p flag_min, @p flag_max may be NULL.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_beadcomm_allgather_flag(aisci_beadcomm *bc, int width, const double *mine,
                                                     double *all, int flag, int *flag_min, int *flag_max);

/**
 * After an exchange failed with AISCI_ERR_MISSING: the smallest tag of the atoms that some
 * partition lacks, and that partition (the same on every rank). Returns 1 and fills the
 * non-NULL outputs; 0 when the last plan found nothing missing (or @p bc is NULL).
 * @since 0.1.0
 */
AISCI_API int aisci_beadcomm_missing(const aisci_beadcomm *bc, int64_t *tag, int *partition);


#ifdef __cplusplus
}
#endif
#endif
