/* Ring balancer, pure planning (aisci_ringlb_assign and the geometry that
 * aisci_ringlb_plan uses): no MPI, no state. */
#include "ringlb_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------
 * Pure planning: geometry of the balanced circulation
 *
 * Lay the ranks' work end to end on a circle of length W = sum of rank costs: rank r owns
 * [P_r, P_r+1). Rank r's target is [r M + s, (r+1) M + s) with M = W / N. The flow over the
 * edge r -> r+1 is then f_r = P_r+1 - (r+1) M - s = d_r - s; s = lower median of d_r
 * minimises sum |f_r| (the cost x hops moved). An item goes to the target interval that
 * holds its midpoint, k = floor((x - s) / M) counted on the unrolled line, i.e. k - owner
 * hops forward (negative: backward).
 * ------------------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

aisci_status aisci_ringlb_geom_build(ring_geom *g, int n, const double *rank_cost, double tol)
{
  g->n = n;
  g->prefix = malloc(sizeof(double) * (size_t) (n + 1));
  double *d = malloc(sizeof(double) * (size_t) n);
  if (!g->prefix || !d) {
    free(g->prefix);
    free(d);
    g->prefix = NULL;
    return aisci_set_error(AISCI_ERR_ALLOC, "ringlb: out of memory for %d rank costs", n);
  }
  g->prefix[0] = 0.0;
  for (int r = 0; r < n; r++) g->prefix[r + 1] = g->prefix[r] + rank_cost[r];
  const double total = g->prefix[n];
  if (!isfinite(total)) {
    free(d);
    free(g->prefix);
    g->prefix = NULL;
    return aisci_set_error(AISCI_ERR_ARG, "ringlb: the total cost over all ranks is not finite");
  }
  g->mean = total / n;
  g->balanced = 1;
  for (int r = 0; r < n; r++)
    if (fabs(rank_cost[r] - g->mean) > tol * g->mean) g->balanced = 0;
  if (g->mean < DBL_MIN) g->balanced = 1; /* no work anywhere (or only subnormal costs) */
  for (int r = 0; r < n; r++) d[r] = g->prefix[r + 1] - (double) (r + 1) * g->mean;
  qsort(d, (size_t) n, sizeof(double), cmp_double);
  g->shift = d[(n - 1) / 2];
  free(d);
  return AISCI_OK;
}

/* Target interval index of position x (unrolled). */
static long geom_interval(const ring_geom *g, double x)
{
  return (long) floor((x - g->shift) / g->mean);
}

/* Destination rank and signed hops for an item of rank o in target interval k. */
static void geom_route(const ring_geom *g, int o, long k, int *dest, int *hops)
{
  const long n = g->n;
  long raw = k - o;
  if (raw >= n || raw <= -n) raw %= n; /* a full turn around the ring is no move */
  *hops = (int) raw;
  *dest = (int) (((o + raw) % n + n) % n);
}

/* Largest position an item of rank o is given: just below P_o+1, so that the end of a
 * rank's range, which only trailing zero-cost items could reach, adds no route. */
static double geom_last(const ring_geom *g, int o)
{
  return g->prefix[o + 1] > g->prefix[o] ? nextafter(g->prefix[o + 1], -INFINITY) : g->prefix[o];
}

/* Bounds on the longest forward and backward route of any rank's item: positions of rank
 * o's items lie in [P_o, geom_last(o)], and the interval index is monotone in x. */
void aisci_ringlb_geom_rounds(const ring_geom *g, int rounds[2])
{
  rounds[0] = rounds[1] = 0;
  if (g->balanced) return;
  for (int o = 0; o < g->n; o++) {
    long k0 = geom_interval(g, g->prefix[o]), k1 = geom_interval(g, geom_last(g, o));
    for (long k = k0; k <= k1; k++) {
      int dest, hops;
      geom_route(g, o, k, &dest, &hops);
      if (hops > rounds[0]) rounds[0] = hops;
      if (-hops > rounds[1]) rounds[1] = -hops;
    }
  }
}

aisci_status aisci_ringlb_check_costs(int n_items, const double *cost, double *sum)
{
  if (n_items < 0)
    return aisci_set_error(AISCI_ERR_ARG, "ringlb: n_items must be >= 0, got %d", n_items);
  if (n_items > 0 && !cost)
    return aisci_set_error(AISCI_ERR_ARG, "ringlb: cost is NULL with n_items = %d", n_items);
  double s = 0.0;
  for (int i = 0; i < n_items; i++) {
    if (!(cost[i] >= 0.0) || !isfinite(cost[i]))
      return aisci_set_error(AISCI_ERR_ARG,
                             "ringlb: cost of item %d must be finite and >= 0, got %g", i, cost[i]);
    s += cost[i];
  }
  *sum = s;
  return AISCI_OK;
}

/* Destinations of rank o's items (the geometry is built). */
void aisci_ringlb_geom_assign(const ring_geom *g, int o, int n_items, const double *cost, int *dest,
                              int *hops)
{
  double before = 0.0; /* running sum in index order, as the rank total was computed */
  const double last = geom_last(g, o);
  for (int i = 0; i < n_items; i++) {
    int de = o, ho = 0;
    if (!g->balanced) {
      const double x = fmin(g->prefix[o] + (before + 0.5 * cost[i]), last);
      geom_route(g, o, geom_interval(g, x), &de, &ho);
    }
    if (dest) dest[i] = de;
    if (hops) hops[i] = ho;
    before += cost[i];
  }
}

aisci_status aisci_ringlb_assign(int nranks, const double *rank_cost, double tolerance, int rank,
                                 int n_items, const double *cost, int *dest, int *hops,
                                 int rounds[2], int *balanced)
{
  if (nranks < 1)
    return aisci_set_error(AISCI_ERR_ARG, "ringlb_assign: nranks must be >= 1, got %d", nranks);
  if (!rank_cost) return aisci_set_error(AISCI_ERR_ARG, "ringlb_assign: rank_cost is NULL");
  if (rank < 0 || rank >= nranks)
    return aisci_set_error(AISCI_ERR_ARG, "ringlb_assign: rank %d outside 0..%d", rank, nranks - 1);
  if (!(tolerance >= 0.0) || !isfinite(tolerance))
    return aisci_set_error(AISCI_ERR_ARG,
                           "ringlb_assign: tolerance must be finite and >= 0, got %g", tolerance);
  for (int r = 0; r < nranks; r++)
    if (!(rank_cost[r] >= 0.0) || !isfinite(rank_cost[r]))
      return aisci_set_error(AISCI_ERR_ARG,
                             "ringlb_assign: cost of rank %d must be finite and >= 0, got %g", r,
                             rank_cost[r]);
  double sum = 0.0;
  aisci_status st = aisci_ringlb_check_costs(n_items, cost, &sum);
  if (st) return st;
  ring_geom g;
  st = aisci_ringlb_geom_build(&g, nranks, rank_cost, tolerance);
  if (st) return st;
  aisci_ringlb_geom_assign(&g, rank, n_items, cost, dest, hops);
  if (rounds) aisci_ringlb_geom_rounds(&g, rounds);
  if (balanced) *balanced = g.balanced;
  free(g.prefix);
  return AISCI_OK;
}
