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
 * @since 0.1
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
 */
AISCI_API aisci_status aisci_beadcomm_create(MPI_Comm universe, MPI_Comm world, int nbeads,
                                             int bead, aisci_beadcomm **out);

/** Free the exchange and its communicators; NULL is allowed. Not collective. */
AISCI_API void aisci_beadcomm_destroy(aisci_beadcomm *bc);

/**
 * Declare the local atoms (n tags, in local order). Call whenever the local atom set or
 * order may have changed (after reneighboring). Local: the next allgather replans.
 * AISCI_ERR_ARG (naming the tag) if a tag appears twice in @p tags; the previous atom set
 * is then kept.
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
 */
AISCI_API aisci_status aisci_beadcomm_allgather(aisci_beadcomm *bc, int width, const double *mine,
                                                double *all);

/**
 * aisci_beadcomm_allgather() that also gives the smallest and largest @p flag passed by
 * the ranks of the universe (same values on every rank), at no extra collective: e.g. to
 * check that all partitions take the same branch before a collective that only some
 * would call. @p flag_min, @p flag_max may be NULL.
 * @since 0.2
 */
AISCI_API aisci_status aisci_beadcomm_allgather_flag(aisci_beadcomm *bc, int width, const double *mine,
                                                     double *all, int flag, int *flag_min, int *flag_max);

/**
 * Sum of @p n doubles over all ranks of all partitions (collective over the universe).
 * AISCI_ERR_ARG, before any communication, if @p n < 0 or, with n > 0, @p in or @p out is NULL.
 */
AISCI_API aisci_status aisci_beadcomm_sum_universe(aisci_beadcomm *bc, int n, const double *in,
                                                   double *out);

/**
 * After an exchange failed with AISCI_ERR_MISSING: the smallest tag of the atoms that some
 * partition lacks, and that partition (the same on every rank). Returns 1 and fills the
 * non-NULL outputs; 0 when the last plan found nothing missing (or @p bc is NULL).
 * @since 0.2
 */
AISCI_API int aisci_beadcomm_missing(const aisci_beadcomm *bc, int64_t *tag, int *partition);

/**
 * Check that every rank of @p comm passed the same @p n values (e.g. settings that must
 * be equal in every partition): one Allreduce. Collective over @p comm, and usable before
 * any exchange exists.
 * @param values    n finite values of this rank.
 * @param rtol      values a, b agree when |a - b| <= rtol max(|a|, |b|) (0: exactly equal).
 * @param timeout_s > 0: give up when some rank has not joined after this many seconds
 *                  (AISCI_ERR_MPI on the ranks that waited; the collective stays posted,
 *                  so the caller must abort, not use @p comm again); <= 0: wait forever.
 * @param index     output: the first position where the ranks disagree, or -1 (the same
 *                  on every rank).
 * @param lo, hi    outputs (may be NULL): the smallest and largest value at @p index.
 * AISCI_ERR_ARG, before any communication, if n < 0, rtol < 0, @p index is NULL or, with
 * n > 0, @p values is NULL.
 * @since 0.2
 */
AISCI_API aisci_status aisci_agree(MPI_Comm comm, int n, const double *values, double rtol,
                                   double timeout_s, int *index, double *lo, double *hi);

/**
 * Frees the buffers of timed-out aisci_agree calls whose collective has completed since
 * (the other ranks joined late). Local, not collective; call it after the late ranks
 * joined, or not at all when the program aborts.
 * @return the number of timed-out collectives still pending.
 * @since 0.5
 */
AISCI_API int aisci_agree_reap(void);

/**
 * How ranks wait for the exchange's collectives: 0 = MPI's own wait (spinning, lowest
 * latency on dedicated cores), 1 = test and sleep 20 us between tests (leaves the CPU to
 * ranks still computing forces). The default is 1 when the node runs more ranks of the
 * universe than it has online cores, else 0. Local setting, not collective.
 */
AISCI_API void aisci_beadcomm_set_polite(aisci_beadcomm *bc, int polite);

/** The current waiting mode (see aisci_beadcomm_set_polite). */
AISCI_API int aisci_beadcomm_polite(const aisci_beadcomm *bc);

/** Number of (atom, bead) values this rank receives point-to-point (diagnostics). */
AISCI_API int aisci_beadcomm_nfixups(const aisci_beadcomm *bc);

/** Number of times the exchange plan was rebuilt (diagnostics). */
AISCI_API long aisci_beadcomm_nrebuilds(const aisci_beadcomm *bc);

#ifdef __cplusplus
}
#endif
#endif
