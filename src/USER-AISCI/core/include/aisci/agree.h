/**
 * @file agree.h
 * @brief Agreement of values across the ranks of a communicator.
 *
 * For settings that must be equal on every rank (every partition of a path-integral run
 * must read the same input): one collective finds the first value on which the ranks
 * differ, and a timeout turns a rank that never joins into an error instead of a hang.
 */
#ifndef AISCI_AGREE_H
#define AISCI_AGREE_H

#include <mpi.h>

#include "aisci/status.h"

#ifdef __cplusplus
extern "C" {
#endif

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
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_agree(MPI_Comm comm, int n, const double *values, double rtol,
                                   double timeout_s, int *index, double *lo, double *hi);

#ifdef __cplusplus
}
#endif
#endif
