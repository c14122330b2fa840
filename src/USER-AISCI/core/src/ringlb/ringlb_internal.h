/* Private interface between the ring balancer's files (not installed):
 * ringlb_plan.c  pure planning, the geometry of the balanced circulation (no MPI);
 * ringlb.c       the balancer object: plan agreement, routing and MPI transport;
 * ringlb_env.c   the environments that travel: wire format, shared-neighbour graphs,
 *                results and their application at the owner. */
#ifndef AISCI_RINGLB_INTERNAL_H
#define AISCI_RINGLB_INTERNAL_H

#include "aisci/ringlb.h"

typedef struct {
  int n;
  double *prefix; /* n + 1 */
  double mean, shift;
  int balanced;
} ring_geom;

/* Geometry from every rank's total cost (same on every rank); g->prefix is malloc'ed. */
aisci_status aisci_ringlb_geom_build(ring_geom *g, int n, const double *rank_cost, double tol);
/* Destination and signed hops of rank o's items. */
void aisci_ringlb_geom_assign(const ring_geom *g, int o, int n_items, const double *cost, int *dest,
                              int *hops);
/* Bounds on the longest forward and backward route of any rank's item. */
void aisci_ringlb_geom_rounds(const ring_geom *g, int rounds[2]);
/* Costs finite and >= 0; their sum. */
aisci_status aisci_ringlb_check_costs(int n_items, const double *cost, double *sum);

#endif
