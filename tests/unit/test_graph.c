/* Graph building (aisci/graph.h) against a brute-force O(n^2 x images) reference:
 * open clusters, cubic / orthorhombic / triclinic / left-handed periodic cells, cells
 * smaller than the cutoff, mixed boundary conditions, triplets, buffer reuse, and every
 * error path with its exact status. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aisci/graph.h"
#include "aisci_test.h"

/* xorshift64*: deterministic uniform numbers in [0, 1) */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double uniform(void)
{
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double) ((rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

/* Reference edge list: filled in (centre, neighbour, shift) order by construction. */
typedef struct ref_edges {
  int64_t n, cap;
  int64_t *i, *j;
  double *v;
} ref_edges;

static void ref_push(ref_edges *r, int i, int j, const double v[3])
{
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 1024;
    r->i = realloc(r->i, (size_t) r->cap * sizeof(int64_t));
    r->j = realloc(r->j, (size_t) r->cap * sizeof(int64_t));
    r->v = realloc(r->v, (size_t) r->cap * 3 * sizeof(double));
    if (!r->i || !r->j || !r->v) abort();
  }
  r->i[r->n] = i;
  r->j[r->n] = j;
  memcpy(r->v + 3 * r->n, v, 3 * sizeof(double));
  r->n++;
}

static void ref_free(ref_edges *r) { free(r->i), free(r->j), free(r->v); }

static void ref_open(ref_edges *r, int n, const double *x, int ncenter, double rc)
{
  r->n = 0;
  for (int i = 0; i < ncenter; i++) {
    for (int j = 0; j < n; j++) {
      if (j == i) continue;
      double v[3], r2 = 0;
      for (int d = 0; d < 3; d++) v[d] = x[3 * j + d] - x[3 * i + d], r2 += v[d] * v[d];
      if (r2 < rc * rc) ref_push(r, i, j, v);
    }
  }
}

/* All shifts with |S_d| <= smax along periodic directions, in lexicographic order. */
static void ref_periodic(ref_edges *r, int n, const double *x, const double cell[3][3],
                         const int pbc[3], double rc, int smax)
{
  r->n = 0;
  int m[3];
  for (int d = 0; d < 3; d++) m[d] = pbc[d] ? smax : 0;
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) {
      for (int sa = -m[0]; sa <= m[0]; sa++) {
        for (int sb = -m[1]; sb <= m[1]; sb++) {
          for (int sc = -m[2]; sc <= m[2]; sc++) {
            if (i == j && sa == 0 && sb == 0 && sc == 0) continue;
            double v[3], r2 = 0;
            for (int d = 0; d < 3; d++) {
              v[d] = x[3 * j + d] - x[3 * i + d] + sa * cell[0][d] + sb * cell[1][d] +
                     sc * cell[2][d];
              r2 += v[d] * v[d];
            }
            if (r2 < rc * rc) ref_push(r, i, j, v);
          }
        }
      }
    }
  }
}

/* Compare the graph with the reference edges and check the triplets from first
 * principles (same centre, different edges, both short, both orders, sorted, complete). */
static void compare(const char *what, const aisci_graph *g, const ref_edges *r, double rc3)
{
  int64_t E = aisci_graph_num_edges(g);
  CHECK(E == r->n, "%s: %lld edges, reference %lld", what, (long long) E, (long long) r->n);
  if (E != r->n) return;
  const int64_t *ei = aisci_graph_edge_index(g);
  const double *ev = aisci_graph_edge_vec(g);
  CHECK((E == 0) == (ei == NULL) && (E == 0) == (ev == NULL), "%s: NULL iff no edges", what);
  int64_t bad_idx = 0, bad_vec = 0;
  for (int64_t e = 0; e < E; e++) {
    if (ei[e] != r->i[e] || ei[E + e] != r->j[e]) bad_idx++;
    for (int d = 0; d < 3; d++) {
      if (fabs(ev[3 * e + d] - r->v[3 * e + d]) > 1e-12) {
        bad_vec++;
        break;
      }
    }
  }
  CHECK(bad_idx == 0, "%s: %lld edges differ in (i, j) or order", what, (long long) bad_idx);
  CHECK(bad_vec == 0, "%s: %lld edge vectors differ", what, (long long) bad_vec);

  /* triplets */
  int64_t T = aisci_graph_num_triplets(g);
  const int64_t *tr = aisci_graph_triplets(g);
  CHECK((T == 0) == (tr == NULL), "%s: triplets NULL iff none", what);
  int64_t expect = 0;
  if (rc3 > 0) {
    for (int64_t b = 0; b < E;) {
      int64_t e = b, m = 0;
      for (; e < E && ei[e] == ei[b]; e++) {
        const double *v = ev + 3 * e;
        if (v[0] * v[0] + v[1] * v[1] + v[2] * v[2] < rc3 * rc3) m++;
      }
      expect += m * (m - 1);
      b = e;
    }
  }
  CHECK(T == expect, "%s: %lld triplets, expected %lld", what, (long long) T, (long long) expect);
  int64_t bad_t = 0;
  for (int64_t t = 0; t < T; t++) {
    int64_t e1 = tr[2 * t], e2 = tr[2 * t + 1];
    int ok = e1 >= 0 && e1 < E && e2 >= 0 && e2 < E && e1 != e2 && ei[e1] == ei[e2];
    if (ok) {
      const double *v1 = ev + 3 * e1, *v2 = ev + 3 * e2;
      ok = v1[0] * v1[0] + v1[1] * v1[1] + v1[2] * v1[2] < rc3 * rc3 &&
           v2[0] * v2[0] + v2[1] * v2[1] + v2[2] * v2[2] < rc3 * rc3;
    }
    /* strictly increasing (e1, e2): sorted and without duplicates, so with the count
     * equal to sum m (m - 1) the list is complete and holds both orders */
    if (ok && t > 0) {
      int64_t p1 = tr[2 * t - 2], p2 = tr[2 * t - 1];
      ok = p1 < e1 || (p1 == e1 && p2 < e2);
    }
    if (!ok) bad_t++;
  }
  CHECK(bad_t == 0, "%s: %lld bad triplets", what, (long long) bad_t);
}

static double *random_box(int n, double lx, double ly, double lz)
{
  double *x = malloc((size_t) (n > 0 ? n : 1) * 3 * sizeof(double));
  for (int i = 0; i < n; i++) {
    x[3 * i] = lx * uniform();
    x[3 * i + 1] = ly * uniform();
    x[3 * i + 2] = lz * uniform();
  }
  return x;
}

/* n atoms at fractional coordinates in [-0.5, 1.5): also tests atoms outside the cell. */
static double *random_in_cell(int n, const double cell[3][3])
{
  double *x = malloc((size_t) n * 3 * sizeof(double));
  for (int i = 0; i < n; i++) {
    double f[3] = {2 * uniform() - 0.5, 2 * uniform() - 0.5, 2 * uniform() - 0.5};
    for (int d = 0; d < 3; d++) x[3 * i + d] = f[0] * cell[0][d] + f[1] * cell[1][d] + f[2] * cell[2][d];
  }
  return x;
}

static void test_open(aisci_graph *g)
{
  ref_edges r = {0};
  /* a water-like density (0.1 / A^3) cluster */
  int n = 400;
  double *x = random_box(n, 16, 16, 16);
  CHECK(aisci_graph_build(g, n, x, n, 5.0, 3.0) == AISCI_OK, "open build: %s", aisci_last_error());
  ref_open(&r, n, x, n, 5.0);
  compare("open cluster", g, &r, 3.0);
  CHECK(r.n > 10 * n, "open cluster has %lld edges", (long long) r.n);

  /* centres restricted (LAMMPS local atoms first, then ghosts); no triplets */
  CHECK(aisci_graph_build(g, n, x, 123, 5.0, 0.0) == AISCI_OK, "ncenter build");
  ref_open(&r, n, x, 123, 5.0);
  compare("open ncenter=123", g, &r, 0.0);
  CHECK(aisci_graph_num_triplets(g) == 0 && aisci_graph_triplets(g) == NULL, "no triplets");

  /* ncenter = 0 gives an empty graph */
  CHECK(aisci_graph_build(g, n, x, 0, 5.0, 3.0) == AISCI_OK, "ncenter 0");
  CHECK(aisci_graph_num_edges(g) == 0 && aisci_graph_edge_index(g) == NULL, "ncenter 0 empty");

  /* cutoff_3body == cutoff */
  CHECK(aisci_graph_build(g, n, x, n, 4.0, 4.0) == AISCI_OK, "rc3 == rc");
  ref_open(&r, n, x, n, 4.0);
  compare("open rc3 == rc", g, &r, 4.0);
  free(x);

  /* sparse and wide: few atoms in a huge box (the cell grid must stay small) */
  n = 60;
  x = random_box(n, 2000, 30, 1e5);
  for (int i = 0; i < 20; i++) x[3 * i] = 3.0 * uniform(), x[3 * i + 2] = 3.0 * uniform();
  CHECK(aisci_graph_build(g, n, x, n, 3.0, 2.0) == AISCI_OK, "sparse build");
  ref_open(&r, n, x, n, 3.0);
  compare("open sparse", g, &r, 2.0);
  free(x);

  /* flat (all z equal) and linear systems */
  n = 200;
  x = random_box(n, 20, 20, 0);
  CHECK(aisci_graph_build(g, n, x, n, 2.5, 1.5) == AISCI_OK, "flat build");
  ref_open(&r, n, x, n, 2.5);
  compare("open flat", g, &r, 1.5);
  for (int i = 0; i < n; i++) x[3 * i + 1] = 0;
  CHECK(aisci_graph_build(g, n, x, n, 0.4, 0.3) == AISCI_OK, "line build");
  ref_open(&r, n, x, n, 0.4);
  compare("open line", g, &r, 0.3);
  free(x);

  /* n = 0 and n = 1: no edges; x may be NULL when n = 0 */
  CHECK(aisci_graph_build(g, 0, NULL, 0, 3.0, 2.0) == AISCI_OK, "n 0");
  CHECK(aisci_graph_num_edges(g) == 0 && aisci_graph_num_triplets(g) == 0, "n 0 empty");
  double one[3] = {1, 2, 3};
  CHECK(aisci_graph_build(g, 1, one, 1, 3.0, 2.0) == AISCI_OK, "n 1");
  CHECK(aisci_graph_num_edges(g) == 0, "n 1 empty");

  /* coincident atoms: zero-length edges between different atoms are kept */
  double same[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  CHECK(aisci_graph_build(g, 3, same, 3, 1.0, 1.0) == AISCI_OK, "coincident");
  ref_open(&r, 3, same, 3, 1.0);
  compare("open coincident", g, &r, 1.0);
  CHECK(aisci_graph_num_edges(g) == 6 && aisci_graph_num_triplets(g) == 6, "coincident counts");

  /* exact order on a hand-made example: 3 atoms on a line, spacing 1 */
  double line[9] = {0, 0, 0, 1, 0, 0, 2, 0, 0};
  CHECK(aisci_graph_build(g, 3, line, 3, 1.5, 1.5) == AISCI_OK, "hand example");
  const int64_t *ei = aisci_graph_edge_index(g);
  const double *ev = aisci_graph_edge_vec(g);
  CHECK(aisci_graph_num_edges(g) == 4, "hand: 4 edges");
  if (aisci_graph_num_edges(g) == 4) {
    const int64_t want[8] = {0, 1, 1, 2, 1, 0, 2, 1};
    CHECK(memcmp(ei, want, sizeof(want)) == 0, "hand: edge index 0->1 1->0 1->2 2->1");
    CHECK(ev[0] == 1 && ev[3] == -1 && ev[6] == 1 && ev[9] == -1, "hand: edge vectors");
    const int64_t *tr = aisci_graph_triplets(g);
    CHECK(aisci_graph_num_triplets(g) == 2 && tr[0] == 1 && tr[1] == 2 && tr[2] == 2 &&
              tr[3] == 1,
          "hand: triplets (1,2) (2,1) around atom 1");
  }
  ref_free(&r);
}

static int smax_for(const double cell[3][3], double rc)
{
  /* shift range for the brute force: cutoff over the smallest face distance, plus the
   * spread of the test atoms' fractional coordinates ([-0.5, 1.5)) */
  double det = 0, hmin = 1e300;
  for (int d = 0; d < 3; d++) {
    const double *u = cell[(d + 1) % 3], *w = cell[(d + 2) % 3];
    double c[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2],
                   u[0] * w[1] - u[1] * w[0]};
    if (d == 0) det = fabs(cell[0][0] * c[0] + cell[0][1] * c[1] + cell[0][2] * c[2]);
    double h = det / sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
    if (h < hmin) hmin = h;
  }
  return (int) ceil(rc / hmin) + 3;
}

static void check_periodic(aisci_graph *g, const char *what, int n, const double cell[3][3],
                           const int pbc[3], double rc, double rc3)
{
  ref_edges r = {0};
  double *x = random_in_cell(n, cell);
  aisci_status st = aisci_graph_build_periodic(g, n, x, cell, pbc, rc, rc3);
  CHECK(st == AISCI_OK, "%s: build: %s", what, aisci_last_error());
  ref_periodic(&r, n, x, cell, pbc, rc, smax_for(cell, rc));
  compare(what, g, &r, rc3);
  /* every edge (i, j, v) has its reverse (j, i, -v) */
  int64_t E = aisci_graph_num_edges(g), missing = 0;
  const int64_t *ei = aisci_graph_edge_index(g);
  const double *ev = aisci_graph_edge_vec(g);
  for (int64_t e = 0; e < E && E == r.n; e++) {
    int found = 0;
    for (int64_t f = 0; f < E && !found; f++) {
      found = ei[f] == ei[E + e] && ei[E + f] == ei[e] && fabs(ev[3 * f] + ev[3 * e]) < 1e-9 &&
              fabs(ev[3 * f + 1] + ev[3 * e + 1]) < 1e-9 &&
              fabs(ev[3 * f + 2] + ev[3 * e + 2]) < 1e-9;
    }
    if (!found) missing++;
    if (e > 400) break; /* a sample is enough */
  }
  CHECK(missing == 0, "%s: %lld edges without their reverse", what, (long long) missing);
  ref_free(&r);
  free(x);
}

static void test_periodic(aisci_graph *g)
{
  const int all[3] = {1, 1, 1};
  const double cubic[3][3] = {{10, 0, 0}, {0, 10, 0}, {0, 0, 10}};
  check_periodic(g, "cubic", 100, cubic, all, 4.5, 3.0);
  const double ortho[3][3] = {{8, 0, 0}, {0, 11, 0}, {0, 0, 14}};
  check_periodic(g, "orthorhombic", 120, ortho, all, 5.0, 2.5);
  const double tric[3][3] = {{9, 0, 0}, {3, 8, 0}, {-2, 2.5, 7.5}};
  check_periodic(g, "triclinic", 90, tric, all, 6.0, 3.5);
  /* rotated general cell (no vector along an axis), left-handed */
  const double general[3][3] = {{6, 1.5, -1}, {-1, 2, 7}, {2, 7.5, 1}};
  check_periodic(g, "left-handed general", 70, general, all, 5.0, 3.0);

  /* cells smaller than the cutoff: self-images and repeated pairs */
  const double tiny[3][3] = {{2, 0, 0}, {0, 2.5, 0}, {0, 0, 3}};
  check_periodic(g, "tiny orthorhombic", 3, tiny, all, 5.0, 4.0);
  const double tiny_tric[3][3] = {{2, 0, 0}, {1.7, 1.5, 0}, {0.9, -0.8, 1.6}};
  check_periodic(g, "tiny skewed triclinic", 2, tiny_tric, all, 4.0, 2.0);

  /* one atom in a 1 A cube with cutoff 2.5: only self-images; count them by hand */
  const double unit[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  const double x0[3] = {0.3, 0.6, 0.9};
  CHECK(aisci_graph_build_periodic(g, 1, x0, unit, all, 2.5, 0) == AISCI_OK, "1 atom");
  int64_t expect = 0;
  for (int a = -3; a <= 3; a++)
    for (int b = -3; b <= 3; b++)
      for (int c = -3; c <= 3; c++)
        if ((a || b || c) && a * a + b * b + c * c < 6.25) expect++;
  CHECK(aisci_graph_num_edges(g) == expect, "1 atom: %lld self-images, expected %lld",
        (long long) aisci_graph_num_edges(g), (long long) expect);
  int zero = 0;
  const double *ev = aisci_graph_edge_vec(g);
  for (int64_t e = 0; e < aisci_graph_num_edges(g); e++) {
    if (ev[3 * e] == 0 && ev[3 * e + 1] == 0 && ev[3 * e + 2] == 0) zero++;
  }
  CHECK(zero == 0, "1 atom: %d zero self-vectors", zero);

  /* mixed boundaries: slab (a, c periodic) and wire (c periodic) */
  const int slab[3] = {1, 0, 1};
  check_periodic(g, "slab triclinic", 80, tric, slab, 5.0, 3.0);
  const int wire[3] = {0, 0, 1};
  check_periodic(g, "wire tiny", 30, tiny, wire, 3.5, 2.0);
  const int none[3] = {0, 0, 0};
  check_periodic(g, "no pbc", 60, tric, none, 5.0, 3.0);

  /* no pbc at all gives exactly the open build */
  double *x = random_in_cell(150, tric);
  CHECK(aisci_graph_build_periodic(g, 150, x, tric, none, 4.0, 2.0) == AISCI_OK, "none");
  int64_t E = aisci_graph_num_edges(g), T = aisci_graph_num_triplets(g);
  int64_t *ei = malloc((size_t) (2 * E + 1) * sizeof(int64_t));
  memcpy(ei, aisci_graph_edge_index(g), (size_t) (2 * E) * sizeof(int64_t));
  CHECK(aisci_graph_build(g, 150, x, 150, 4.0, 2.0) == AISCI_OK, "open");
  CHECK(aisci_graph_num_edges(g) == E && aisci_graph_num_triplets(g) == T &&
            memcmp(ei, aisci_graph_edge_index(g), (size_t) (2 * E) * sizeof(int64_t)) == 0,
        "pbc 0 0 0 equals the open build");
  free(ei);

  /* translating every atom by lattice vectors (wrapping some) keeps the edge set */
  CHECK(aisci_graph_build_periodic(g, 150, x, tric, all, 4.0, 2.0) == AISCI_OK, "pbc");
  E = aisci_graph_num_edges(g);
  ei = malloc((size_t) (2 * E + 1) * sizeof(int64_t));
  memcpy(ei, aisci_graph_edge_index(g), (size_t) (2 * E) * sizeof(int64_t));
  for (int i = 0; i < 150; i += 2) {
    for (int d = 0; d < 3; d++) x[3 * i + d] += 3 * tric[0][d] - 2 * tric[2][d];
  }
  CHECK(aisci_graph_build_periodic(g, 150, x, tric, all, 4.0, 2.0) == AISCI_OK, "shifted");
  CHECK(aisci_graph_num_edges(g) == E &&
            memcmp(ei, aisci_graph_edge_index(g), (size_t) (2 * E) * sizeof(int64_t)) == 0,
        "lattice translations keep the edges");
  free(ei);
  free(x);
}

/* Random small systems: random general cells (some far smaller than the cutoff), random
 * pbc flags, random cutoffs. */
static void test_periodic_random(aisci_graph *g)
{
  int done = 0;
  for (int trial = 0; trial < 200 && done < 60; trial++) {
    double cell[3][3], len[3];
    for (int d = 0; d < 3; d++) {
      for (int e = 0; e < 3; e++) cell[d][e] = 2 * uniform() - 1;
      cell[d][d] += d == 0 ? 1.5 : (uniform() < 0.5 ? 1.5 : -1.5);
      double s = 1 + 5 * uniform();
      for (int e = 0; e < 3; e++) cell[d][e] *= s;
      len[d] = sqrt(cell[d][0] * cell[d][0] + cell[d][1] * cell[d][1] + cell[d][2] * cell[d][2]);
    }
    double rc = (0.3 + 2 * uniform()) * (len[0] + len[1] + len[2]) / 3;
    if (smax_for(cell, rc) > 10) continue;
    int pbc[3] = {uniform() < 0.8, uniform() < 0.8, uniform() < 0.8};
    int n = 1 + (int) (12 * uniform());
    double rc3 = uniform() < 0.2 ? 0.0 : rc * uniform();
    char what[64];
    snprintf(what, sizeof(what), "random cell %d (pbc %d%d%d)", trial, pbc[0], pbc[1], pbc[2]);
    int failed = aisci_test_failed;
    check_periodic(g, what, n, (const double(*)[3]) cell, pbc, rc, rc3);
    if (aisci_test_failed != failed) {
      fprintf(stderr, "  cell %g %g %g / %g %g %g / %g %g %g, rc %g rc3 %g n %d\n", cell[0][0],
              cell[0][1], cell[0][2], cell[1][0], cell[1][1], cell[1][2], cell[2][0], cell[2][1],
              cell[2][2], rc, rc3, n);
    }
    done++;
  }
  CHECK(done == 60, "only %d random cells tried", done);
}

static void test_reuse(aisci_graph *g)
{
  double *x = random_box(500, 17, 17, 17);
  CHECK(aisci_graph_build(g, 500, x, 500, 5.0, 3.0) == AISCI_OK, "big");
  const int64_t *ei = aisci_graph_edge_index(g), *tr = aisci_graph_triplets(g);
  const double *ev = aisci_graph_edge_vec(g);
  int64_t E = aisci_graph_num_edges(g);
  CHECK(aisci_graph_build(g, 300, x, 300, 4.0, 2.0) == AISCI_OK, "smaller");
  CHECK(aisci_graph_edge_index(g) == ei && aisci_graph_edge_vec(g) == ev &&
            aisci_graph_triplets(g) == tr,
        "a smaller rebuild reuses every buffer");
  CHECK(aisci_graph_build(g, 500, x, 500, 5.0, 3.0) == AISCI_OK, "big again");
  CHECK(aisci_graph_num_edges(g) == E && aisci_graph_edge_index(g) == ei &&
            aisci_graph_edge_vec(g) == ev && aisci_graph_triplets(g) == tr,
        "the same rebuild reuses every buffer");
  free(x);
}

static void test_errors(aisci_graph *g)
{
  CHECK(aisci_graph_create(NULL) == AISCI_ERR_ARG, "create(NULL)");
  aisci_graph_destroy(NULL);
  CHECK(aisci_graph_num_edges(NULL) == 0 && aisci_graph_edge_index(NULL) == NULL &&
            aisci_graph_edge_vec(NULL) == NULL && aisci_graph_num_triplets(NULL) == 0 &&
            aisci_graph_triplets(NULL) == NULL,
        "accessors accept NULL");

  double x[6] = {0, 0, 0, 1, 0, 0};
  const double cell[3][3] = {{5, 0, 0}, {0, 5, 0}, {0, 0, 5}};
  const int pbc[3] = {1, 1, 1};
  double nan = NAN, inf = INFINITY;
  struct {
    const char *what;
    aisci_status got;
  } open_cases[] = {
      {"NULL graph", aisci_graph_build(NULL, 2, x, 2, 2, 1)},
      {"NULL x", aisci_graph_build(g, 2, NULL, 2, 2, 1)},
      {"n < 0", aisci_graph_build(g, -1, x, 0, 2, 1)},
      {"ncenter < 0", aisci_graph_build(g, 2, x, -1, 2, 1)},
      {"ncenter > n", aisci_graph_build(g, 2, x, 3, 2, 1)},
      {"cutoff 0", aisci_graph_build(g, 2, x, 2, 0, 0)},
      {"cutoff < 0", aisci_graph_build(g, 2, x, 2, -2, 0)},
      {"cutoff NaN", aisci_graph_build(g, 2, x, 2, nan, 0)},
      {"cutoff inf", aisci_graph_build(g, 2, x, 2, inf, 0)},
      {"cutoff_3body > cutoff", aisci_graph_build(g, 2, x, 2, 2, 2.5)},
      {"cutoff_3body < 0", aisci_graph_build(g, 2, x, 2, 2, -1)},
      {"cutoff_3body NaN", aisci_graph_build(g, 2, x, 2, 2, nan)},
  };
  for (size_t k = 0; k < sizeof(open_cases) / sizeof(open_cases[0]); k++) {
    CHECK(open_cases[k].got == AISCI_ERR_ARG, "build %s: status %d", open_cases[k].what,
          (int) open_cases[k].got);
  }
  /* the message names the problem; the graph is left empty after a failure */
  CHECK(aisci_graph_build(g, 2, x, 2, 2, 1) == AISCI_OK && aisci_graph_num_edges(g) == 2,
        "valid build");
  CHECK(aisci_graph_build(g, 2, x, 2, 2, 3) == AISCI_ERR_ARG, "rc3 > rc");
  CHECK(strstr(aisci_last_error(), "cutoff_3body") != NULL, "message: %s", aisci_last_error());
  CHECK(aisci_graph_num_edges(g) == 0 && aisci_graph_edge_index(g) == NULL &&
            aisci_graph_num_triplets(g) == 0,
        "failed build leaves the graph empty");
  x[4] = nan;
  CHECK(aisci_graph_build(g, 2, x, 2, 2, 1) == AISCI_ERR_ARG, "NaN coordinate");
  CHECK(strstr(aisci_last_error(), "atom 1") != NULL, "message: %s", aisci_last_error());
  x[4] = 0;

  const int pbc2[3] = {1, 2, 1};
  const double singular[3][3] = {{5, 0, 0}, {0, 5, 0}, {5, 5, 0}};
  const double zero[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  const double nancell[3][3] = {{5, 0, 0}, {0, NAN, 0}, {0, 0, 5}};
  struct {
    const char *what;
    aisci_status got;
  } pcases[] = {
      {"NULL graph", aisci_graph_build_periodic(NULL, 2, x, cell, pbc, 2, 1)},
      {"NULL x", aisci_graph_build_periodic(g, 2, NULL, cell, pbc, 2, 1)},
      {"NULL cell", aisci_graph_build_periodic(g, 2, x, NULL, pbc, 2, 1)},
      {"NULL pbc", aisci_graph_build_periodic(g, 2, x, cell, NULL, 2, 1)},
      {"n < 0", aisci_graph_build_periodic(g, -3, x, cell, pbc, 2, 1)},
      {"pbc 2", aisci_graph_build_periodic(g, 2, x, cell, pbc2, 2, 1)},
      {"singular cell", aisci_graph_build_periodic(g, 2, x, singular, pbc, 2, 1)},
      {"zero cell", aisci_graph_build_periodic(g, 2, x, zero, pbc, 2, 1)},
      {"NaN cell", aisci_graph_build_periodic(g, 2, x, nancell, pbc, 2, 1)},
      {"cutoff 0", aisci_graph_build_periodic(g, 2, x, cell, pbc, 0, 0)},
      {"cutoff NaN", aisci_graph_build_periodic(g, 2, x, cell, pbc, nan, 0)},
      {"cutoff_3body > cutoff", aisci_graph_build_periodic(g, 2, x, cell, pbc, 2, 3)},
  };
  for (size_t k = 0; k < sizeof(pcases) / sizeof(pcases[0]); k++) {
    CHECK(pcases[k].got == AISCI_ERR_ARG, "build_periodic %s: status %d", pcases[k].what,
          (int) pcases[k].got);
  }
  CHECK(aisci_graph_build_periodic(g, 2, x, singular, pbc, 2, 1) == AISCI_ERR_ARG &&
            strstr(aisci_last_error(), "singular") != NULL,
        "singular message: %s", aisci_last_error());
  /* a cutoff needing millions of images per direction is refused, not attempted */
  const double flat[3][3] = {{1e-6, 0, 0}, {0, 5, 0}, {0, 0, 5}};
  CHECK(aisci_graph_build_periodic(g, 2, x, flat, pbc, 2, 1) == AISCI_ERR_ALLOC,
        "absurd image count: %s", aisci_last_error());
  CHECK(aisci_graph_num_edges(g) == 0, "failed periodic build leaves the graph empty");
  CHECK(aisci_graph_build_periodic(g, 0, NULL, cell, pbc, 2, 1) == AISCI_OK &&
            aisci_graph_num_edges(g) == 0,
        "n = 0 periodic");
}

/* Not a benchmark: prints the build time of water-density boxes (edges only, then with
 * triplets) so that a regression to O(n^2) shows; it would also blow the ctest limit. */
static void test_scaling(aisci_graph *g)
{
  double t[3];
  int64_t edges[3], trip = 0;
  const int sizes[3] = {2000, 16000, 16000};
  for (int k = 0; k < 3; k++) {
    int n = sizes[k];
    double l = cbrt(n / 0.1);
    double *x = random_box(n, l, l, l);
    clock_t c0 = clock();
    CHECK(aisci_graph_build(g, n, x, n, 5.0, k == 2 ? 3.5 : 0.0) == AISCI_OK, "scaling build");
    t[k] = (double) (clock() - c0) / CLOCKS_PER_SEC;
    edges[k] = aisci_graph_num_edges(g);
    trip = aisci_graph_num_triplets(g);
    free(x);
  }
  printf("open build, rc 5, density 0.1/A^3: n=2000 %.3f s (%lld edges), n=16000 %.3f s "
         "(%lld edges); with rc3 3.5: %.3f s (%lld triplets)\n",
         t[0], (long long) edges[0], t[1], (long long) edges[1], t[2], (long long) trip);
  /* ~52 neighbours per atom inside at this density and cutoff, fewer at the surface */
  CHECK(edges[1] > 16000LL * 35 && edges[1] < 16000LL * 53, "edges per atom %g",
        (double) edges[1] / 16000);
}


/* aisci_graph_select: candidates within rc + skin, then the edges within rc after every
 * atom moved by up to skin / 2, with graph atom g stored in row 2g + 1 of x (even rows
 * never read): equal to a brute force at the new positions, in (centre, neighbour) order,
 * with the triplets of a fresh build. */
static void test_select_open(void)
{
  rng_state = 0xed9e;
  enum { NG = 40, NROW = 2 * NG, NCEN = 10 };
  const double rc = 2.0, skin = 0.6, rc3 = 1.6;
  double x[3 * NROW], g0[3 * NG], g1[3 * NG];
  int index[NG];
  for (int g = 0; g < NG; g++) {
    index[g] = 2 * g + 1;
    for (int a = 0; a < 3; a++) {
      g0[3 * g + a] = 5.0 * uniform();
      x[3 * (2 * g) + a] = 1e300;
    }
  }
  aisci_graph *cand = NULL, *sel = NULL, *fresh = NULL;
  CHECK(aisci_graph_create(&cand) == AISCI_OK && aisci_graph_create(&sel) == AISCI_OK &&
            aisci_graph_create(&fresh) == AISCI_OK,
        "create");
  CHECK(aisci_graph_build(cand, NG, g0, NCEN, rc + skin, 0.0) == AISCI_OK, "candidates");
  CHECK(aisci_graph_num_atoms(cand) == NG, "num_atoms %d", aisci_graph_num_atoms(cand));
  const int64_t nc = aisci_graph_num_edges(cand);
  for (int g = 0; g < NG; g++)
    for (int a = 0; a < 3; a++) {
      g1[3 * g + a] = g0[3 * g + a] + 0.5 * skin / sqrt(3.0) * (2.0 * uniform() - 1.0);
      x[3 * (2 * g + 1) + a] = g1[3 * g + a];
    }
  CHECK(aisci_graph_select(sel, cand, NROW, x, index, NULL, rc, rc3) == AISCI_OK, "select: %s",
        aisci_last_error());
  const int64_t ne = aisci_graph_num_edges(sel);
  const int64_t *ei = aisci_graph_edge_index(sel);
  const double *ev = aisci_graph_edge_vec(sel);
  int64_t nb = 0, bad = 0;
  for (int i = 0; i < NCEN; i++)
    for (int j = 0; j < NG; j++) {
      if (j == i) continue;
      double v[3], r2 = 0.0;
      for (int a = 0; a < 3; a++) {
        v[a] = x[3 * index[j] + a] - x[3 * index[i] + a];
        r2 += v[a] * v[a];
      }
      if (r2 >= rc * rc) continue;
      if (nb < ne && (ei[nb] != i || ei[ne + nb] != j || ev[3 * nb] != v[0] ||
                      ev[3 * nb + 1] != v[1] || ev[3 * nb + 2] != v[2]))
        bad++;
      nb++;
    }
  CHECK(ne == nb && bad == 0, "%lld edges vs %lld brute force, %lld differ", (long long) ne,
        (long long) nb, (long long) bad);
  CHECK(ne > 20 && ne < nc, "some candidates dropped: %lld of %lld", (long long) ne,
        (long long) nc);
  /* the same edges and triplets as a fresh build at the new positions */
  CHECK(aisci_graph_build(fresh, NG, g1, NCEN, rc, rc3) == AISCI_OK, "fresh");
  CHECK(aisci_graph_num_edges(fresh) == ne &&
            memcmp(aisci_graph_edge_index(fresh), ei, 2 * sizeof(int64_t) * (size_t) ne) == 0 &&
            memcmp(aisci_graph_edge_vec(fresh), ev, 3 * sizeof(double) * (size_t) ne) == 0,
        "edges equal a fresh build");
  const int64_t nt = aisci_graph_num_triplets(sel);
  CHECK(nt > 0 && nt == aisci_graph_num_triplets(fresh) &&
            memcmp(aisci_graph_triplets(fresh), aisci_graph_triplets(sel),
                   2 * sizeof(int64_t) * (size_t) nt) == 0,
        "triplets equal a fresh build (%lld)", (long long) nt);
  /* errors: the output stays empty, x untouched */
  double xx[3 * NROW];
  memcpy(xx, x, sizeof xx);
  CHECK(aisci_graph_select(sel, cand, NROW, x, index, NULL, 0.0, 0.0) == AISCI_ERR_ARG &&
            aisci_graph_num_edges(sel) == 0,
        "cutoff 0");
  CHECK(aisci_graph_select(sel, cand, NROW, x, index, NULL, rc, 2.5) == AISCI_ERR_ARG,
        "cutoff_3body > cutoff");
  CHECK(aisci_graph_select(sel, cand, NROW, NULL, index, NULL, rc, 0.0) == AISCI_ERR_ARG,
        "NULL x");
  CHECK(aisci_graph_select(cand, cand, NROW, x, index, NULL, rc, 0.0) == AISCI_ERR_ARG,
        "out == candidates");
  CHECK(aisci_graph_select(NULL, cand, NROW, x, index, NULL, rc, 0.0) == AISCI_ERR_ARG,
        "NULL out");
  CHECK(aisci_graph_select(sel, NULL, NROW, x, index, NULL, rc, 0.0) == AISCI_ERR_ARG,
        "NULL candidates");
  index[3] = NROW;
  CHECK(aisci_graph_select(sel, cand, NROW, x, index, NULL, rc, 0.0) == AISCI_ERR_ARG,
        "row outside n_atoms");
  CHECK(strstr(aisci_last_error(), "graph atom 3 is row 80, outside [0, 80)") != NULL,
        "message: %s", aisci_last_error());
  index[3] = 7;
  CHECK(aisci_graph_select(sel, cand, NG - 1, g1, NULL, NULL, rc, 0.0) == AISCI_ERR_ARG,
        "identity rows: n_atoms < graph atoms");
  CHECK(memcmp(xx, x, sizeof xx) == 0, "x untouched");
  aisci_graph_destroy(cand);
  aisci_graph_destroy(sel);
  aisci_graph_destroy(fresh);
}

/* Periodic candidates keep integer image shifts: edge_vec = x_j - x_i + S . cell exactly
 * (S from aisci_graph_edge_shift, no rounding); selecting in a strained box with moved
 * atoms gives the edges of a fresh periodic build there. */
static void test_select_periodic(void)
{
  rng_state = 0x5eed;
  enum { N = 60 };
  const double cell0[3][3] = {{6.0, 0.0, 0.0}, {1.2, 5.5, 0.0}, {-0.8, 0.9, 5.8}};
  const int pbc[3] = {1, 1, 1};
  const double rc = 2.4, skin = 0.4, rc3 = 1.8;
  double *x0 = random_in_cell(N, cell0);
  aisci_graph *cand = NULL, *sel = NULL, *fresh = NULL;
  CHECK(aisci_graph_create(&cand) == AISCI_OK && aisci_graph_create(&sel) == AISCI_OK &&
            aisci_graph_create(&fresh) == AISCI_OK,
        "create");
  CHECK(aisci_graph_build_periodic(cand, N, x0, cell0, pbc, rc + skin, 0.0) == AISCI_OK,
        "candidates: %s", aisci_last_error());
  const int64_t nc = aisci_graph_num_edges(cand);
  const int64_t *ci = aisci_graph_edge_index(cand);
  const double *cv = aisci_graph_edge_vec(cand);
  const int *cs = aisci_graph_edge_shift(cand);
  CHECK(cs != NULL, "shifts");
  int64_t bad = 0, nonzero = 0;
  for (int64_t e = 0; e < nc; e++) {
    const double *xi = x0 + 3 * ci[e], *xj = x0 + 3 * ci[nc + e];
    for (int d = 0; d < 3; d++) {
      double v = xj[d] - xi[d] + cs[3 * e] * cell0[0][d] + cs[3 * e + 1] * cell0[1][d] +
                 cs[3 * e + 2] * cell0[2][d];
      if (v != cv[3 * e + d]) bad++;
    }
    nonzero += cs[3 * e] != 0 || cs[3 * e + 1] != 0 || cs[3 * e + 2] != 0;
  }
  CHECK(bad == 0 && nonzero > 0, "edge_vec = x_j - x_i + S . cell: %lld differ, %lld shifted",
        (long long) bad, (long long) nonzero);
  /* strain the box by 1% (atoms follow affinely) and move them by < skin / 2 minus the
   * strain's displacement */
  double cell1[3][3], x1[3 * N];
  for (int a = 0; a < 3; a++)
    for (int d = 0; d < 3; d++) cell1[a][d] = cell0[a][d] * (d == 0 ? 1.01 : 1.0);
  for (int i = 0; i < N; i++)
    for (int d = 0; d < 3; d++)
      x1[3 * i + d] = x0[3 * i + d] * (d == 0 ? 1.01 : 1.0) + 0.02 * (2.0 * uniform() - 1.0);
  CHECK(aisci_graph_select(sel, cand, N, x1, NULL, cell1, rc, rc3) == AISCI_OK, "select: %s",
        aisci_last_error());
  CHECK(aisci_graph_build_periodic(fresh, N, x1, cell1, pbc, rc, rc3) == AISCI_OK, "fresh");
  const int64_t ne = aisci_graph_num_edges(sel);
  int64_t vbad = 0;
  if (ne == aisci_graph_num_edges(fresh)) {
    const double *a = aisci_graph_edge_vec(sel), *b = aisci_graph_edge_vec(fresh);
    for (int64_t k = 0; k < 3 * ne; k++) vbad += fabs(a[k] - b[k]) > 1e-12;
  }
  CHECK(ne > 0 && ne == aisci_graph_num_edges(fresh) &&
            memcmp(aisci_graph_edge_index(sel), aisci_graph_edge_index(fresh),
                   2 * sizeof(int64_t) * (size_t) ne) == 0 &&
            memcmp(aisci_graph_edge_shift(sel), aisci_graph_edge_shift(fresh),
                   3 * sizeof(int) * (size_t) ne) == 0 &&
            vbad == 0,
        "strained box: %lld edges vs %lld fresh, %lld vectors differ", (long long) ne,
        (long long) aisci_graph_num_edges(fresh), (long long) vbad);
  CHECK(aisci_graph_num_triplets(sel) == aisci_graph_num_triplets(fresh) &&
            aisci_graph_num_triplets(sel) > 0,
        "strained box: triplets %lld vs %lld", (long long) aisci_graph_num_triplets(sel),
        (long long) aisci_graph_num_triplets(fresh));
  /* an open build has zero shifts */
  CHECK(aisci_graph_build(fresh, N, x0, N, rc, 0.0) == AISCI_OK, "open");
  const int *os = aisci_graph_edge_shift(fresh);
  int64_t nz = 0;
  for (int64_t k = 0; k < 3 * aisci_graph_num_edges(fresh); k++) nz += os[k] != 0;
  CHECK(nz == 0, "open build: zero shifts (%lld nonzero)", (long long) nz);
  free(x0);
  aisci_graph_destroy(cand);
  aisci_graph_destroy(sel);
  aisci_graph_destroy(fresh);
}

/* aisci_graph_gather: centres (owned rows of mapped types passing both filters) first,
 * then every other mapped row, each in row order. */
static void test_gather(void)
{
  /* rows 0..4 owned, 5..7 ghosts; host types 1..3, type 2 not in the model */
  const int type[8] = {1, 2, 3, 1, 3, 1, 2, 3};
  const int model_type[4] = {-1, 0, -1, 1};
  const int centre_type[4] = {0, 1, 0, 0};    /* only type 1 rows are centres */
  const int centre_row[5] = {1, 1, 1, 0, 1};  /* row 3 is not in the group */
  double x[24];
  for (int k = 0; k < 24; k++) x[k] = k;
  int index[8], ng = -1, nc = -1;
  int64_t types[8];
  double pos[24];
  CHECK(aisci_graph_gather(5, 8, type, 3, model_type, NULL, NULL, x, index, types, pos, &ng,
                           &nc) == AISCI_OK,
        "all owned: %s", aisci_last_error());
  const int want1[6] = {0, 2, 3, 4, 5, 7};
  CHECK(ng == 6 && nc == 4 && memcmp(index, want1, sizeof want1) == 0 && types[1] == 1 &&
            pos[3 * 5] == 21.0,
        "all owned: %d atoms, %d centres", ng, nc);
  CHECK(aisci_graph_gather(5, 8, type, 3, model_type, centre_type, centre_row, x, index, types,
                           NULL, &ng, &nc) == AISCI_OK,
        "filtered");
  const int want2[6] = {0, 2, 3, 4, 5, 7};    /* centre: row 0 only (row 3 not in group) */
  CHECK(ng == 6 && nc == 1 && memcmp(index, want2, sizeof want2) == 0, "filtered: %d, %d", ng,
        nc);
  CHECK(aisci_graph_gather(6, 5, type, 3, model_type, NULL, NULL, x, index, types, pos, &ng,
                           &nc) == AISCI_ERR_ARG,
        "n_local > n_atoms");
  CHECK(aisci_graph_gather(5, 8, type, 2, model_type, NULL, NULL, x, index, types, pos, &ng,
                           &nc) == AISCI_ERR_ARG,
        "type outside 1..ntypes");
  CHECK(aisci_graph_gather(5, 8, type, 3, NULL, NULL, NULL, x, index, types, pos, &ng, &nc) ==
            AISCI_ERR_ARG,
        "NULL model_type");
}

int main(void)
{
  aisci_graph *g = NULL;
  CHECK(aisci_graph_create(&g) == AISCI_OK && g != NULL, "create");
  CHECK(aisci_graph_num_edges(g) == 0 && aisci_graph_edge_index(g) == NULL, "new graph empty");
  test_open(g);
  test_periodic(g);
  test_periodic_random(g);
  test_reuse(g);
  test_errors(g);
  test_scaling(g);
  test_select_open();
  test_select_periodic();
  test_gather();
  aisci_graph_destroy(g);
  return aisci_test_summary("test_graph");
}
