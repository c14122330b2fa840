/* aisci_graph_centre_cost: per-centre work estimate (1 + edges + triplets with unit
 * weights) against the edges and triplets that aisci_graph_build() itself builds for
 * random atoms (open boundaries, some atoms not centres, as LAMMPS ghosts), other
 * weights, no triplets, and every argument error with its exact status. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aisci/graph.h"
#include "aisci_test.h"

static void test_against_graph(int n, int ncentre, double rc, double rc3)
{
  double *x = malloc(sizeof(double) * 3 * (size_t) n);
  for (int k = 0; k < 3 * n; k++) x[k] = 12.0 * aisci_test_urand();
  aisci_graph *g = NULL;
  CHECK(aisci_graph_create(&g) == AISCI_OK, "graph_create");
  CHECK(aisci_graph_build(g, n, x, ncentre, rc, rc3) == AISCI_OK, "graph_build");
  const int64_t ne = aisci_graph_num_edges(g), nt = aisci_graph_num_triplets(g);
  const int64_t *ei = aisci_graph_edge_index(g), *tr = aisci_graph_triplets(g);
  const double *ev = aisci_graph_edge_vec(g);
  double *ref = calloc((size_t) ncentre + 1, sizeof(double));
  double *cost = calloc((size_t) ncentre + 1, sizeof(double));
  for (int c = 0; c < ncentre; c++) ref[c] = 1.0;
  for (int64_t e = 0; e < ne; e++) ref[ei[e]] += 1.0;
  for (int64_t t = 0; t < nt; t++) ref[ei[tr[2 * t]]] += 1.0;
  const double unit[3] = {1.0, 1.0, 1.0};
  /* centres beyond the first half are ignored when n_centres is smaller */
  CHECK(aisci_graph_centre_cost(ncentre, ne, ei, ev, rc3, unit, cost) == AISCI_OK, "cost");
  int same = 1;
  for (int c = 0; c < ncentre; c++) same &= cost[c] == ref[c];
  CHECK(same, "n %d: 1 + edges + triplets equals the graph's own counts (%lld edges, %lld triplets)",
        n, (long long) ne, (long long) nt);
  const int half = ncentre / 2;
  CHECK(aisci_graph_centre_cost(half, ne, ei, ev, rc3, unit, cost) == AISCI_OK, "cost, half");
  same = 1;
  for (int c = 0; c < half; c++) same &= cost[c] == ref[c];
  CHECK(same, "edges of centres >= n_centres are ignored");
  /* weights: cost = a + b edges + c triplets */
  const double w[3] = {2.5, 0.5, 0.25};
  CHECK(aisci_graph_centre_cost(ncentre, ne, ei, ev, rc3, w, cost) == AISCI_OK, "weighted");
  double *edges = calloc((size_t) ncentre + 1, sizeof(double));
  double *trip = calloc((size_t) ncentre + 1, sizeof(double));
  for (int64_t e = 0; e < ne; e++) edges[ei[e]] += 1.0;
  for (int64_t t = 0; t < nt; t++) trip[ei[tr[2 * t]]] += 1.0;
  double err = 0.0;
  for (int c = 0; c < ncentre; c++)
    err = fmax(err, fabs(cost[c] - (2.5 + 0.5 * edges[c] + 0.25 * trip[c])));
  CHECK(err == 0.0, "weighted cost, max error %g", err);
  /* no three-body cutoff: edge_vec not needed */
  CHECK(aisci_graph_centre_cost(ncentre, ne, ei, NULL, 0.0, unit, cost) == AISCI_OK, "no triplets");
  same = 1;
  for (int c = 0; c < ncentre; c++) same &= cost[c] == 1.0 + edges[c];
  CHECK(same, "1 + edges without triplets");
  free(edges);
  free(trip);
  free(ref);
  free(cost);
  free(x);
  aisci_graph_destroy(g);
}

static void test_errors(void)
{
  const int64_t centre[3] = {0, 0, 1};
  const double vec[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  const double unit[3] = {1.0, 1.0, 1.0};
  double cost[2];
  CHECK(aisci_graph_centre_cost(0, 0, NULL, NULL, 0.0, unit, NULL) == AISCI_OK, "empty");
  CHECK(aisci_graph_centre_cost(-1, 0, NULL, NULL, 0.0, unit, cost) == AISCI_ERR_ARG, "n_centres < 0");
  CHECK(aisci_graph_centre_cost(2, -1, centre, vec, 0.0, unit, cost) == AISCI_ERR_ARG, "n_edges < 0");
  CHECK(aisci_graph_centre_cost(2, 3, centre, vec, 0.0, NULL, cost) == AISCI_ERR_ARG, "NULL weight");
  CHECK(aisci_graph_centre_cost(2, 3, centre, vec, 0.0, unit, NULL) == AISCI_ERR_ARG, "NULL cost");
  CHECK(aisci_graph_centre_cost(2, 3, NULL, vec, 0.0, unit, cost) == AISCI_ERR_ARG, "NULL centre");
  CHECK(aisci_graph_centre_cost(2, 3, centre, NULL, 1.5, unit, cost) == AISCI_ERR_ARG,
        "NULL edge_vec with triplets");
  CHECK(aisci_graph_centre_cost(2, 3, centre, vec, -1.0, unit, cost) == AISCI_ERR_ARG, "cutoff_3body < 0");
  const double neg[3] = {1.0, -1.0, 1.0}, inf[3] = {1.0, 1.0, INFINITY};
  CHECK(aisci_graph_centre_cost(2, 3, centre, vec, 0.0, neg, cost) == AISCI_ERR_ARG, "negative weight");
  CHECK(strstr(aisci_last_error(), "weight[1]") != NULL, "message names the weight: %s", aisci_last_error());
  CHECK(aisci_graph_centre_cost(2, 3, centre, vec, 0.0, inf, cost) == AISCI_ERR_ARG, "infinite weight");
  const int64_t bad[3] = {0, -2, 1};
  CHECK(aisci_graph_centre_cost(2, 3, bad, vec, 0.0, unit, cost) == AISCI_ERR_ARG, "negative centre");
  CHECK(strstr(aisci_last_error(), "edge 1") != NULL, "message names the edge: %s", aisci_last_error());
  CHECK(aisci_graph_centre_cost(2, 3, centre, vec, 1.5, unit, cost) == AISCI_OK && cost[0] == 5.0 &&
            cost[1] == 2.0,
        "hand example: centre 0 has 2 edges and 2 triplets, centre 1 one edge: %g %g", cost[0],
        cost[1]);
}

int main(void)
{
  aisci_test_rng_state = 20240611;
  test_against_graph(0, 0, 3.0, 2.0);
  test_against_graph(50, 30, 3.0, 2.0);
  test_against_graph(400, 250, 3.0, 2.0);
  test_against_graph(400, 400, 4.0, 4.0);
  test_errors();
  return aisci_test_summary("test_graph_cost");
}
