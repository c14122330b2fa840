/* Private helpers of libaisci_core, shared by its source files (not installed, not part of
 * the API). One definition each: a subsystem that needs to grow a buffer, agree on a
 * status across ranks or report an MPI failure uses these instead of its own copy. */
#ifndef AISCI_INTERNAL_H
#define AISCI_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "aisci/status.h"

#define AISCI_PI 3.14159265358979323846

/* Make *buf hold at least `need` elements of `elem` bytes: grows by 1.5x (at least 16
 * elements), never shrinks. AISCI_ERR_ALLOC (message naming `who` and `what`) when the
 * size overflows or realloc fails; *buf and *cap are then unchanged. */
aisci_status aisci_grow(void **buf, int64_t *cap, int64_t need, size_t elem, const char *who,
                        const char *what);

/* AISCI_OK for MPI_SUCCESS, else AISCI_ERR_MPI with "<who>: <what> failed (MPI error rc)". */
aisci_status aisci_mpi_fail(int rc, const char *who, const char *what);

/* Collective: every rank of comm learns the worst status. A rank whose own status was OK
 * gets "<who>: failed on another rank" as its message. AISCI_ERR_MPI when the reduction
 * itself fails. */
aisci_status aisci_agree_status(MPI_Comm comm, aisci_status st, const char *who);

/* Triplets of one centre whose edges are [e0, e1) (edge_vec E x 3): the ordered pairs
 * (a, b), a != b, of edges both shorter than sqrt(r2max), sorted by a then b. Writes them
 * to trip (2 per triplet) unless trip is NULL; returns their number. The one triplet rule
 * of the core (aisci/graph.h): graph builds, edge selection and environment graphs. */
int64_t aisci_centre_triplets(const double *edge_vec, int64_t e0, int64_t e1, double r2max,
                              int64_t *trip);

#endif
