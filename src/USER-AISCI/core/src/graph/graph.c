/* Atom graphs (edges within a cutoff, three-body triplets) by a cell list.
 *
 * Both builds share one engine: a set of points (the atoms themselves for open
 * boundaries; the atoms plus every periodic image that can lie within the cutoff of the
 * cell for the periodic build) is binned into cells no smaller than the cutoff, and each
 * centre looks at the 27 cells around its own. A centre's candidates are sorted by
 * (neighbour, image shift) before they are appended, so the edge order never depends on
 * the binning. Every buffer lives in the aisci_graph and only grows. */
#include "aisci/graph.h"

#include "internal.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Cells are made this much larger than the cutoff so that rounding in the bin index
 * can never hide a pair closer than the cutoff two cells apart. */
#define AISCI_GRAPH_CELL_MARGIN 1e-8

/* One candidate edge of the current centre, before sorting. */
typedef struct graph_cand {
  int j;       /* neighbour atom */
  int s[3];    /* image shift along a, b, c (0 for open boundaries) */
  double v[3]; /* x_j - x_i + S . cell */
} graph_cand;

struct aisci_graph {
  int natoms;          /* atoms of the last successful build (edge ends are < natoms) */
  int64_t nedge;       /* E of the last successful build */
  int64_t ntrip;       /* T of the last successful build */
  int64_t *edge_index; /* 2 x cap_edge; first 2E entries used */
  int64_t cap_edge;
  double *edge_vec; /* 3 x cap_vec */
  int64_t cap_vec;
  int *edge_shift; /* 3 x cap_shift: integer image shift S of each edge */
  int64_t cap_shift;
  int64_t *nbr; /* scratch neighbour row, cap_nbr */
  int64_t cap_nbr;
  int64_t *trip; /* 2 x cap_trip */
  int64_t cap_trip;
  int64_t *short_edges; /* scratch: the current centre's edges < cutoff_3body */
  int64_t cap_short;
  graph_cand *cand; /* scratch: the current centre's candidates */
  int64_t cap_cand;
  /* points binned by the cell list */
  double *pt; /* 3 x cap_pt positions */
  int64_t cap_pt;
  int *pt_atom; /* atom of each point (periodic) */
  int64_t cap_pt_atom;
  int *pt_shift; /* 3 x cap_pt_shift: total image offset t of each point (periodic) */
  int64_t cap_pt_shift;
  int *pt_cell; /* cell of each point */
  int64_t cap_pt_cell;
  int *cell_pts; /* points sorted by cell */
  int64_t cap_cell_pts;
  int *cell_start; /* ncell + 1 offsets into cell_pts */
  int64_t cap_cell_start;
  int nc[3];          /* cells per direction */
  double lo[3];       /* lower corner of the binned box */
  double inv_size[3]; /* 1 / cell size (0 for a flat direction) */
};

/* Every buffer of the graph grows through the core's one helper (internal.h). */
static aisci_status ensure(void **buf, int64_t *cap, int64_t need, size_t elem, const char *what)
{
  return aisci_grow(buf, cap, need, elem, "graph", what);
}

aisci_status aisci_graph_create(aisci_graph **out)
{
  if (!out) return aisci_set_error(AISCI_ERR_ARG, "aisci_graph_create: out is NULL");
  *out = NULL;
  aisci_graph *g = calloc(1, sizeof(*g));
  if (!g) return aisci_set_error(AISCI_ERR_ALLOC, "aisci_graph_create: out of memory");
  *out = g;
  return AISCI_OK;
}

void aisci_graph_destroy(aisci_graph *g)
{
  if (!g) return;
  free(g->edge_index);
  free(g->edge_vec);
  free(g->edge_shift);
  free(g->nbr);
  free(g->trip);
  free(g->short_edges);
  free(g->cand);
  free(g->pt);
  free(g->pt_atom);
  free(g->pt_shift);
  free(g->pt_cell);
  free(g->cell_pts);
  free(g->cell_start);
  free(g);
}

int64_t aisci_graph_num_edges(const aisci_graph *g)
{
  return g ? g->nedge : 0;
}

const int64_t *aisci_graph_edge_index(const aisci_graph *g)
{
  return g && g->nedge > 0 ? g->edge_index : NULL;
}

const double *aisci_graph_edge_vec(const aisci_graph *g)
{
  return g && g->nedge > 0 ? g->edge_vec : NULL;
}

const int *aisci_graph_edge_shift(const aisci_graph *g)
{
  return g && g->nedge > 0 ? g->edge_shift : NULL;
}

int aisci_graph_num_atoms(const aisci_graph *g)
{
  return g ? g->natoms : 0;
}

int64_t aisci_graph_num_triplets(const aisci_graph *g)
{
  return g ? g->ntrip : 0;
}

const int64_t *aisci_graph_triplets(const aisci_graph *g)
{
  return g && g->ntrip > 0 ? g->trip : NULL;
}

/* Arguments shared by both builds. */
static aisci_status check_common(const char *fn, int n, const double *x, double cutoff,
                                 double cutoff_3body)
{
  if (n < 0) return aisci_set_error(AISCI_ERR_ARG, "%s: n must be >= 0, got %d", fn, n);
  if (n > 0 && !x) return aisci_set_error(AISCI_ERR_ARG, "%s: x is NULL with n = %d", fn, n);
  if (!(cutoff > 0) || !isfinite(cutoff)) {
    return aisci_set_error(AISCI_ERR_ARG, "%s: cutoff must be finite and > 0, got %g", fn, cutoff);
  }
  if (!(cutoff_3body >= 0) || !(cutoff_3body <= cutoff)) {
    return aisci_set_error(AISCI_ERR_ARG, "%s: cutoff_3body must be in [0, cutoff = %g], got %g",
                           fn, cutoff, cutoff_3body);
  }
  for (int64_t k = 0; k < 3 * (int64_t) n; k++) {
    if (!isfinite(x[k])) {
      return aisci_set_error(AISCI_ERR_ARG, "%s: coordinate %lld of atom %lld is %g", fn,
                             (long long) (k % 3), (long long) (k / 3), x[k]);
    }
  }
  return AISCI_OK;
}

/* Bin the g->pt points (npt of them) into cells of size >= cutoff. The number of cells is
 * capped near 2 npt so that a sparse, wide set of atoms cannot ask for a huge grid. */
static aisci_status bin_points(aisci_graph *g, int64_t npt, double cutoff)
{
  double hi[3];
  for (int d = 0; d < 3; d++) g->lo[d] = hi[d] = npt > 0 ? g->pt[d] : 0.0;
  for (int64_t p = 1; p < npt; p++) {
    for (int d = 0; d < 3; d++) {
      double c = g->pt[3 * p + d];
      if (c < g->lo[d]) g->lo[d] = c;
      if (c > hi[d]) hi[d] = c;
    }
  }
  const double size_min = cutoff * (1.0 + AISCI_GRAPH_CELL_MARGIN);
  double want[3];
  for (int d = 0; d < 3; d++) {
    double extent = hi[d] - g->lo[d];
    double w = isfinite(extent) ? floor(extent / size_min) : 1e6;
    want[d] = w < 1 ? 1 : (w > 1e6 ? 1e6 : w);
  }
  /* at most ~2 cells per point, and few enough that cell ids fit an int */
  const double max_cells = npt < 32 ? 64.0 : (npt < (1 << 26) ? 2.0 * (double) npt : 1e8);
  while (want[0] * want[1] * want[2] > max_cells) {
    double f = cbrt(want[0] * want[1] * want[2] / max_cells) * 1.0001;
    for (int d = 0; d < 3; d++) {
      double w = floor(want[d] / f);
      want[d] = w < 1 ? 1 : w;
    }
  }
  int64_t ncell = 1;
  for (int d = 0; d < 3; d++) {
    g->nc[d] = (int) want[d];
    ncell *= g->nc[d];
    double extent = hi[d] - g->lo[d];
    g->inv_size[d] = extent > 0 ? g->nc[d] / extent : 0.0;
  }
  aisci_status st;
  if ((st = ensure((void **) &g->cell_start, &g->cap_cell_start, ncell + 1, sizeof(int),
                   "cell offsets")) != AISCI_OK ||
      (st = ensure((void **) &g->pt_cell, &g->cap_pt_cell, npt, sizeof(int), "point cells")) !=
          AISCI_OK ||
      (st = ensure((void **) &g->cell_pts, &g->cap_cell_pts, npt, sizeof(int), "cell points")) !=
          AISCI_OK) {
    return st;
  }
  memset(g->cell_start, 0, (size_t) (ncell + 1) * sizeof(int));
  for (int64_t p = 0; p < npt; p++) {
    int c[3];
    for (int d = 0; d < 3; d++) {
      double u = (g->pt[3 * p + d] - g->lo[d]) * g->inv_size[d];
      int k = (int) u;
      c[d] = k < 0 ? 0 : (k >= g->nc[d] ? g->nc[d] - 1 : k);
    }
    int cell = (c[2] * g->nc[1] + c[1]) * g->nc[0] + c[0];
    g->pt_cell[p] = cell;
    g->cell_start[cell + 1]++;
  }
  for (int64_t c = 0; c < ncell; c++) g->cell_start[c + 1] += g->cell_start[c];
  /* Counting sort, stable: points keep increasing order inside a cell. */
  for (int64_t p = 0; p < npt; p++) g->cell_pts[g->cell_start[g->pt_cell[p]]++] = (int) p;
  for (int64_t c = ncell; c > 0; c--) g->cell_start[c] = g->cell_start[c - 1];
  g->cell_start[0] = 0;
  return AISCI_OK;
}

static int cand_cmp(const void *pa, const void *pb)
{
  const graph_cand *a = pa, *b = pb;
  if (a->j != b->j) return a->j < b->j ? -1 : 1;
  for (int d = 0; d < 3; d++) {
    if (a->s[d] != b->s[d]) return a->s[d] < b->s[d] ? -1 : 1;
  }
  return 0;
}

/* Edges of centres 0..ncenter-1 (points 0..ncenter-1 are the centres themselves).
 * cell == NULL: open boundaries, point p is atom p. Otherwise point p is atom
 * pt_atom[p] displaced by pt_shift[p] . cell, and the edge vector is recomputed from the
 * caller's x so that it is exactly x_j - x_i + S . cell. */
static aisci_status build_edges(aisci_graph *g, int ncenter, const double *x,
                                const double (*cell)[3], double cutoff)
{
  const double rc2 = cutoff * cutoff;
  int64_t nedge = 0;
  aisci_status st;
  for (int i = 0; i < ncenter; i++) {
    const double *xi = x + 3 * (int64_t) i;
    const int *ti = cell ? g->pt_shift + 3 * (int64_t) i : NULL;
    int home = g->pt_cell[i];
    int hc[3] = {home % g->nc[0], (home / g->nc[0]) % g->nc[1], home / (g->nc[0] * g->nc[1])};
    int64_t ncand = 0;
    for (int dz = -1; dz <= 1; dz++) {
      int cz = hc[2] + dz;
      if (cz < 0 || cz >= g->nc[2]) continue;
      for (int dy = -1; dy <= 1; dy++) {
        int cy = hc[1] + dy;
        if (cy < 0 || cy >= g->nc[1]) continue;
        for (int dx = -1; dx <= 1; dx++) {
          int cx = hc[0] + dx;
          if (cx < 0 || cx >= g->nc[0]) continue;
          int c = (cz * g->nc[1] + cy) * g->nc[0] + cx;
          for (int q = g->cell_start[c]; q < g->cell_start[c + 1]; q++) {
            int p = g->cell_pts[q];
            if (p == i) continue;
            graph_cand cd;
            if (cell) {
              cd.j = g->pt_atom[p];
              const double *xj = x + 3 * (int64_t) cd.j;
              for (int d = 0; d < 3; d++) cd.s[d] = g->pt_shift[3 * (int64_t) p + d] - ti[d];
              for (int d = 0; d < 3; d++) {
                cd.v[d] = xj[d] - xi[d] + cd.s[0] * cell[0][d] + cd.s[1] * cell[1][d] +
                    cd.s[2] * cell[2][d];
              }
            } else {
              cd.j = p;
              cd.s[0] = cd.s[1] = cd.s[2] = 0;
              for (int d = 0; d < 3; d++) cd.v[d] = x[3 * (int64_t) p + d] - xi[d];
            }
            double r2 = cd.v[0] * cd.v[0] + cd.v[1] * cd.v[1] + cd.v[2] * cd.v[2];
            if (!(r2 < rc2)) continue;
            if ((st = ensure((void **) &g->cand, &g->cap_cand, ncand + 1, sizeof(graph_cand),
                             "candidate edges")) != AISCI_OK) {
              return st;
            }
            g->cand[ncand++] = cd;
          }
        }
      }
    }
    if (ncand > 1) qsort(g->cand, (size_t) ncand, sizeof(graph_cand), cand_cmp);
    int64_t need = nedge + ncand;
    if ((st = ensure((void **) &g->edge_index, &g->cap_edge, need, 2 * sizeof(int64_t),
                     "edge index")) != AISCI_OK ||
        (st = ensure((void **) &g->edge_vec, &g->cap_vec, need, 3 * sizeof(double),
                     "edge vectors")) != AISCI_OK ||
        (st = ensure((void **) &g->edge_shift, &g->cap_shift, need, 3 * sizeof(int),
                     "edge shifts")) != AISCI_OK ||
        (st = ensure((void **) &g->nbr, &g->cap_nbr, need, sizeof(int64_t), "neighbours")) !=
            AISCI_OK) {
      return st;
    }
    for (int64_t k = 0; k < ncand; k++, nedge++) {
      g->edge_index[nedge] = i;
      g->nbr[nedge] = g->cand[k].j;
      memcpy(g->edge_vec + 3 * nedge, g->cand[k].v, sizeof(g->cand[k].v));
      memcpy(g->edge_shift + 3 * nedge, g->cand[k].s, sizeof(g->cand[k].s));
    }
  }
  /* Row 1 of the 2 x E index follows row 0. */
  if (nedge > 0) memcpy(g->edge_index + nedge, g->nbr, (size_t) nedge * sizeof(int64_t));
  g->nedge = nedge;
  return AISCI_OK;
}

/* Triplets: ordered pairs of different edges of one centre, both < cutoff_3body
 * (aisci_centre_triplets, the core's one triplet rule), centre by centre. */
static aisci_status build_triplets(aisci_graph *g, double cutoff_3body)
{
  g->ntrip = 0;
  if (!(cutoff_3body > 0) || g->nedge == 0) return AISCI_OK;
  const double r2max = cutoff_3body * cutoff_3body;
  const int64_t E = g->nedge;
  const int64_t *centre = g->edge_index;
  /* Count first, so the triplet array grows at most once. */
  int64_t total = 0;
  for (int64_t b = 0; b < E;) {
    int64_t e = b;
    while (e < E && centre[e] == centre[b]) e++;
    int64_t m = aisci_centre_triplets(g->edge_vec, b, e, r2max, NULL);
    if (total > INT64_MAX - m) {
      return aisci_set_error(AISCI_ERR_ALLOC, "graph: triplet count overflows int64");
    }
    total += m;
    b = e;
  }
  aisci_status st =
      ensure((void **) &g->trip, &g->cap_trip, total, 2 * sizeof(int64_t), "triplets");
  if (st != AISCI_OK) return st;
  int64_t t = 0;
  for (int64_t b = 0; b < E;) {
    int64_t e = b;
    while (e < E && centre[e] == centre[b]) e++;
    t += aisci_centre_triplets(g->edge_vec, b, e, r2max, g->trip + 2 * t);
    b = e;
  }
  g->ntrip = t;
  return AISCI_OK;
}

aisci_status aisci_graph_build(aisci_graph *g, int n, const double *x, int ncenter, double cutoff,
                               double cutoff_3body)
{
  static const char fn[] = "aisci_graph_build";
  if (!g) return aisci_set_error(AISCI_ERR_ARG, "%s: graph is NULL", fn);
  g->nedge = g->ntrip = 0;
  g->natoms = 0;
  aisci_status st = check_common(fn, n, x, cutoff, cutoff_3body);
  if (st != AISCI_OK) return st;
  if (ncenter < 0 || ncenter > n) {
    return aisci_set_error(AISCI_ERR_ARG, "%s: ncenter must be in [0, n = %d], got %d", fn, n,
                           ncenter);
  }
  if (n == 0) return AISCI_OK;
  if ((st = ensure((void **) &g->pt, &g->cap_pt, n, 3 * sizeof(double), "points")) != AISCI_OK)
    return st;
  g->natoms = n;
  memcpy(g->pt, x, (size_t) n * 3 * sizeof(double));
  if ((st = bin_points(g, n, cutoff)) != AISCI_OK ||
      (st = build_edges(g, ncenter, x, NULL, cutoff)) != AISCI_OK ||
      (st = build_triplets(g, cutoff_3body)) != AISCI_OK) {
    g->nedge = g->ntrip = 0;
    g->natoms = 0;
    return st;
  }
  return AISCI_OK;
}

/* Append point (atom, total image offset t) at position x_atom + t . cell. */
static aisci_status add_image(aisci_graph *g, int64_t *npt, const double *xa, int atom,
                              const int t[3], const double cell[3][3])
{
  aisci_status st;
  int64_t p = *npt;
  if (p >= INT_MAX) {
    return aisci_set_error(AISCI_ERR_ALLOC,
                           "aisci_graph_build_periodic: more than %d periodic images needed "
                           "(cell far smaller than the cutoff)",
                           INT_MAX);
  }
  if ((st = ensure((void **) &g->pt, &g->cap_pt, p + 1, 3 * sizeof(double), "images")) !=
          AISCI_OK ||
      (st = ensure((void **) &g->pt_atom, &g->cap_pt_atom, p + 1, sizeof(int), "image atoms")) !=
          AISCI_OK ||
      (st = ensure((void **) &g->pt_shift, &g->cap_pt_shift, p + 1, 3 * sizeof(int),
                   "image shifts")) != AISCI_OK) {
    return st;
  }
  for (int d = 0; d < 3; d++) {
    g->pt[3 * p + d] = xa[d] + t[0] * cell[0][d] + t[1] * cell[1][d] + t[2] * cell[2][d];
    g->pt_shift[3 * p + d] = t[d];
  }
  g->pt_atom[p] = atom;
  *npt = p + 1;
  return AISCI_OK;
}

aisci_status aisci_graph_build_periodic(aisci_graph *g, int n, const double *x,
                                        const double cell[3][3], const int pbc[3], double cutoff,
                                        double cutoff_3body)
{
  static const char fn[] = "aisci_graph_build_periodic";
  if (!g) return aisci_set_error(AISCI_ERR_ARG, "%s: graph is NULL", fn);
  g->nedge = g->ntrip = 0;
  g->natoms = 0;
  if (!cell) return aisci_set_error(AISCI_ERR_ARG, "%s: cell is NULL", fn);
  if (!pbc) return aisci_set_error(AISCI_ERR_ARG, "%s: pbc is NULL", fn);
  aisci_status st = check_common(fn, n, x, cutoff, cutoff_3body);
  if (st != AISCI_OK) return st;
  for (int d = 0; d < 3; d++) {
    if (pbc[d] != 0 && pbc[d] != 1) {
      return aisci_set_error(AISCI_ERR_ARG, "%s: pbc[%d] must be 0 or 1, got %d", fn, d, pbc[d]);
    }
    for (int e = 0; e < 3; e++) {
      if (!isfinite(cell[d][e])) {
        return aisci_set_error(AISCI_ERR_ARG, "%s: cell[%d][%d] is %g", fn, d, e, cell[d][e]);
      }
    }
  }
  /* cross[d] = the other two lattice vectors' cross product, so det = a . (b x c) and the
   * inverse's columns are cross[d] / det: f_d = x . cross[d] / det. */
  double cross[3][3];
  for (int d = 0; d < 3; d++) {
    const double *u = cell[(d + 1) % 3], *w = cell[(d + 2) % 3];
    cross[d][0] = u[1] * w[2] - u[2] * w[1];
    cross[d][1] = u[2] * w[0] - u[0] * w[2];
    cross[d][2] = u[0] * w[1] - u[1] * w[0];
  }
  const double det = cell[0][0] * cross[0][0] + cell[0][1] * cross[0][1] + cell[0][2] * cross[0][2];
  double len[3];
  for (int d = 0; d < 3; d++) {
    len[d] = sqrt(cell[d][0] * cell[d][0] + cell[d][1] * cell[d][1] + cell[d][2] * cell[d][2]);
  }
  if (!(fabs(det) > 1e-12 * len[0] * len[1] * len[2])) {
    return aisci_set_error(AISCI_ERR_ARG,
                           "%s: the cell is singular (det = %g for |a| = %g, |b| = %g, |c| = %g)",
                           fn, det, len[0], len[1], len[2]);
  }
  if (n == 0) return AISCI_OK;
  g->natoms = n;

  /* Along a periodic direction d, a point within the cutoff of the cell has fractional
   * coordinate in [-cutoff/h_d, 1 + cutoff/h_d], h_d = |det| / |cross[d]| being the
   * distance between the cell's two faces normal to it. */
  double reach[3];
  int smax[3];
  for (int d = 0; d < 3; d++) {
    double cn =
        sqrt(cross[d][0] * cross[d][0] + cross[d][1] * cross[d][1] + cross[d][2] * cross[d][2]);
    reach[d] = pbc[d] ? cutoff * cn / fabs(det) * (1.0 + AISCI_GRAPH_CELL_MARGIN) + 1e-12 : 0.0;
    double s = pbc[d] ? ceil(reach[d]) + 1 : 0;
    if (s > 1e6) {
      return aisci_set_error(AISCI_ERR_ALLOC,
                             "%s: cutoff %g needs %g periodic images along lattice vector %d", fn,
                             cutoff, 2 * s + 1, d);
    }
    smax[d] = (int) s;
  }

  /* Wrap every atom into the cell along the periodic directions (offset w_i), then the
   * first n points are the atoms themselves (the centres) and the rest their images. */
  int64_t npt = 0;
  for (int i = 0; i < n; i++) {
    const double *xi = x + 3 * (int64_t) i;
    int t[3];
    for (int d = 0; d < 3; d++) {
      double f = (xi[0] * cross[d][0] + xi[1] * cross[d][1] + xi[2] * cross[d][2]) / det;
      double w = pbc[d] ? -floor(f) : 0.0;
      if (fabs(w) > 1e8) {
        return aisci_set_error(AISCI_ERR_ARG, "%s: atom %d lies %g cells away from the cell", fn, i,
                               fabs(w));
      }
      t[d] = (int) w;
    }
    if ((st = add_image(g, &npt, xi, i, t, cell)) != AISCI_OK) goto fail;
  }
  for (int i = 0; i < n; i++) {
    const double *xi = x + 3 * (int64_t) i;
    int w[3];
    double fw[3];
    for (int d = 0; d < 3; d++) {
      w[d] = g->pt_shift[3 * (int64_t) i + d];
      fw[d] = (xi[0] * cross[d][0] + xi[1] * cross[d][1] + xi[2] * cross[d][2]) / det + w[d];
    }
    for (int sa = -smax[0]; sa <= smax[0]; sa++) {
      double fa = fw[0] + sa;
      if (pbc[0] && (fa < -reach[0] || fa > 1 + reach[0])) continue;
      for (int sb = -smax[1]; sb <= smax[1]; sb++) {
        double fb = fw[1] + sb;
        if (pbc[1] && (fb < -reach[1] || fb > 1 + reach[1])) continue;
        for (int sc = -smax[2]; sc <= smax[2]; sc++) {
          double fc = fw[2] + sc;
          if (pbc[2] && (fc < -reach[2] || fc > 1 + reach[2])) continue;
          if (sa == 0 && sb == 0 && sc == 0) continue;
          int t[3] = {w[0] + sa, w[1] + sb, w[2] + sc};
          if ((st = add_image(g, &npt, xi, i, t, cell)) != AISCI_OK) goto fail;
        }
      }
    }
  }
  if ((st = bin_points(g, npt, cutoff)) != AISCI_OK ||
      (st = build_edges(g, n, x, cell, cutoff)) != AISCI_OK ||
      (st = build_triplets(g, cutoff_3body)) != AISCI_OK) {
    goto fail;
  }
  return AISCI_OK;
fail:
  g->nedge = g->ntrip = 0;
  g->natoms = 0;
  return st;
}

/* ---- graph atoms, edge selection, per-centre cost ---- */

aisci_status aisci_graph_gather(int n_local, int n_atoms, const int *type, int ntypes,
                                const int *model_type, const int *centre_type,
                                const int *centre_row, const double *x, int *index, int64_t *types,
                                double *pos, int *n_graph, int *n_centres)
{
  static const char fn[] = "aisci_graph_gather";
  if (n_local < 0 || n_atoms < n_local || ntypes < 1 || !n_graph || !n_centres)
    return aisci_set_error(AISCI_ERR_ARG,
                           "%s: bad count (n_local %d, n_atoms %d, ntypes %d) or NULL output", fn,
                           n_local, n_atoms, ntypes);
  *n_graph = *n_centres = 0;
  if (!model_type || (n_atoms > 0 && (!type || !index || !types)))
    return aisci_set_error(AISCI_ERR_ARG, "%s: NULL argument", fn);
  for (int i = 0; i < n_atoms; i++)
    if (type[i] < 1 || type[i] > ntypes)
      return aisci_set_error(AISCI_ERR_ARG, "%s: type %d of row %d outside 1..%d", fn, type[i], i,
                             ntypes);
  int n = 0, nc = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < n_atoms; i++) {
      const int centre =
          i < n_local && (!centre_type || centre_type[type[i]]) && (!centre_row || centre_row[i]);
      if (model_type[type[i]] < 0 || centre != (pass == 0)) continue;
      index[n] = i;
      types[n] = model_type[type[i]];
      if (x && pos)
        for (int a = 0; a < 3; a++) pos[3 * (size_t) n + a] = x[3 * (size_t) i + a];
      n++;
      nc += centre;
    }
  *n_graph = n;
  *n_centres = nc;
  return AISCI_OK;
}

aisci_status aisci_graph_select(aisci_graph *out, const aisci_graph *candidates, int n_atoms,
                                const double *x, const int *index, const double cell[3][3],
                                double cutoff, double cutoff_3body)
{
  static const char fn[] = "aisci_graph_select";
  if (!out || !candidates || out == candidates)
    return aisci_set_error(AISCI_ERR_ARG, "%s: NULL graph, or out is the candidate graph", fn);
  out->nedge = out->ntrip = 0;
  out->natoms = 0;
  if (n_atoms < 0)
    return aisci_set_error(AISCI_ERR_ARG, "%s: n_atoms must be >= 0, got %d", fn, n_atoms);
  if (!(cutoff > 0.0) || !isfinite(cutoff))
    return aisci_set_error(AISCI_ERR_ARG, "%s: cutoff must be finite and > 0, got %g", fn, cutoff);
  if (!(cutoff_3body >= 0) || !(cutoff_3body <= cutoff))
    return aisci_set_error(AISCI_ERR_ARG, "%s: cutoff_3body must be in [0, cutoff = %g], got %g",
                           fn, cutoff, cutoff_3body);
  const int ng = candidates->natoms;
  const int64_t nc = candidates->nedge;
  if (ng > 0 && !x) return aisci_set_error(AISCI_ERR_ARG, "%s: x is NULL", fn);
  for (int a = 0; a < ng; a++) {
    const int row = index ? index[a] : a;
    if (row < 0 || row >= n_atoms)
      return aisci_set_error(AISCI_ERR_ARG, "%s: graph atom %d is row %d, outside [0, %d)", fn, a,
                             row, n_atoms);
  }
  aisci_status st;
  if ((st = ensure((void **) &out->edge_index, &out->cap_edge, nc, 2 * sizeof(int64_t),
                   "edge index")) != AISCI_OK ||
      (st = ensure((void **) &out->edge_vec, &out->cap_vec, nc, 3 * sizeof(double),
                   "edge vectors")) != AISCI_OK ||
      (st = ensure((void **) &out->edge_shift, &out->cap_shift, nc, 3 * sizeof(int),
                   "edge shifts")) != AISCI_OK ||
      (st = ensure((void **) &out->nbr, &out->cap_nbr, nc, sizeof(int64_t), "neighbours")) !=
          AISCI_OK)
    return st;
  const double rc2 = cutoff * cutoff;
  const int64_t *cand = candidates->edge_index;
  int64_t n = 0;
  for (int64_t e = 0; e < nc; e++) {
    const int64_t i = cand[e], j = cand[nc + e];
    const double *xi = x + 3 * (size_t) (index ? index[i] : i);
    const double *xj = x + 3 * (size_t) (index ? index[j] : j);
    double v[3] = {xj[0] - xi[0], xj[1] - xi[1], xj[2] - xi[2]};
    const int *s = candidates->edge_shift + 3 * e;
    if (cell)
      for (int d = 0; d < 3; d++) v[d] += s[0] * cell[0][d] + s[1] * cell[1][d] + s[2] * cell[2][d];
    if (v[0] * v[0] + v[1] * v[1] + v[2] * v[2] >= rc2) continue;
    out->edge_index[n] = i;
    out->nbr[n] = j;
    memcpy(out->edge_vec + 3 * n, v, sizeof v);
    memcpy(out->edge_shift + 3 * n, s, 3 * sizeof(int));
    n++;
  }
  if (n > 0) memcpy(out->edge_index + n, out->nbr, (size_t) n * sizeof(int64_t));
  out->nedge = n;
  out->natoms = ng;
  if ((st = build_triplets(out, cutoff_3body)) != AISCI_OK) {
    out->nedge = out->ntrip = 0;
    out->natoms = 0;
  }
  return st;
}

aisci_status aisci_graph_centre_cost(int n_centres, int64_t n_edges, const int64_t *centre,
                                     const double *edge_vec, double cutoff_3body,
                                     const double weight[3], double *cost)
{
  static const char fn[] = "aisci_graph_centre_cost";
  if (n_centres < 0 || n_edges < 0)
    return aisci_set_error(AISCI_ERR_ARG, "%s: n_centres = %d and n_edges = %lld must be >= 0", fn,
                           n_centres, (long long) n_edges);
  if (!weight) return aisci_set_error(AISCI_ERR_ARG, "%s: weight is NULL", fn);
  for (int k = 0; k < 3; k++)
    if (!(weight[k] >= 0.0) || !isfinite(weight[k]))
      return aisci_set_error(AISCI_ERR_ARG, "%s: weight[%d] must be finite and >= 0, got %g", fn, k,
                             weight[k]);
  if (!(cutoff_3body >= 0.0) || !isfinite(cutoff_3body))
    return aisci_set_error(AISCI_ERR_ARG, "%s: cutoff_3body must be finite and >= 0, got %g", fn,
                           cutoff_3body);
  if (n_centres > 0 && !cost) return aisci_set_error(AISCI_ERR_ARG, "%s: cost is NULL", fn);
  if (n_edges > 0 && (!centre || (cutoff_3body > 0.0 && !edge_vec)))
    return aisci_set_error(AISCI_ERR_ARG, "%s: centre or edge_vec is NULL with %lld edges", fn,
                           (long long) n_edges);
  for (int64_t e = 0; e < n_edges; e++)
    if (centre[e] < 0)
      return aisci_set_error(AISCI_ERR_ARG, "%s: edge %lld has centre %lld < 0", fn, (long long) e,
                             (long long) centre[e]);
  /* cost holds the edge counts, then the short-edge counts go to a second pass */
  for (int c = 0; c < n_centres; c++) cost[c] = 0.0;
  for (int64_t e = 0; e < n_edges; e++)
    if (centre[e] < n_centres) cost[centre[e]] += 1.0;
  for (int c = 0; c < n_centres; c++) cost[c] = weight[0] + weight[1] * cost[c];
  if (cutoff_3body > 0.0 && weight[2] > 0.0 && n_centres > 0) {
    double *m = calloc((size_t) n_centres, sizeof(double));
    if (!m)
      return aisci_set_error(AISCI_ERR_ALLOC, "%s: out of memory for %d centres", fn, n_centres);
    const double c2 = cutoff_3body * cutoff_3body;
    for (int64_t e = 0; e < n_edges; e++) {
      const double *v = edge_vec + 3 * e;
      if (centre[e] < n_centres && v[0] * v[0] + v[1] * v[1] + v[2] * v[2] < c2)
        m[centre[e]] += 1.0;
    }
    for (int c = 0; c < n_centres; c++) cost[c] += weight[2] * m[c] * (m[c] - 1.0);
    free(m);
  }
  return AISCI_OK;
}

aisci_status aisci_graph_centre_ranges(const aisci_graph *g, int n_centres, int64_t *edge_start,
                                       int64_t *trip_start)
{
  static const char fn[] = "aisci_graph_centre_ranges";
  if (!g || n_centres < 0 || !edge_start)
    return aisci_set_error(AISCI_ERR_ARG, "%s: NULL graph or edge_start, or n_centres %d < 0", fn,
                           n_centres);
  const int64_t E = g->nedge, T = g->ntrip;
  const int64_t *centre = g->edge_index;
  for (int64_t e = 0; e < E; e++)
    if (centre[e] < 0 || centre[e] >= n_centres || (e > 0 && centre[e] < centre[e - 1]))
      return aisci_set_error(AISCI_ERR_ARG,
                             "%s: edge %lld has centre %lld (centres must be in [0, %d), "
                             "non-decreasing)",
                             fn, (long long) e, (long long) centre[e], n_centres);
  for (int c = 0; c <= n_centres; c++) edge_start[c] = 0;
  for (int64_t e = 0; e < E; e++) edge_start[centre[e] + 1]++;
  for (int c = 0; c < n_centres; c++) edge_start[c + 1] += edge_start[c];
  if (trip_start) {
    for (int c = 0; c <= n_centres; c++) trip_start[c] = 0;
    for (int64_t t = 0; t < T; t++) trip_start[centre[g->trip[2 * t]] + 1]++;
    for (int c = 0; c < n_centres; c++) trip_start[c + 1] += trip_start[c];
  }
  return AISCI_OK;
}

aisci_status aisci_graph_keep_centres(aisci_graph *out, const aisci_graph *g, int n_centres,
                                      const int *dest, int rank)
{
  static const char fn[] = "aisci_graph_keep_centres";
  if (!out || !g || out == g || n_centres < 0 || (n_centres > 0 && !dest))
    return aisci_set_error(AISCI_ERR_ARG,
                           "%s: NULL graph or dest, out is the input, or n_centres %d < 0", fn,
                           n_centres);
  out->nedge = out->ntrip = 0;
  out->natoms = 0;
  const int64_t E = g->nedge, T = g->ntrip;
  const int64_t *centre = g->edge_index;
  for (int64_t e = 0; e < E; e++)
    if (centre[e] < 0 || centre[e] >= n_centres || (e > 0 && centre[e] < centre[e - 1]))
      return aisci_set_error(AISCI_ERR_ARG,
                             "%s: edge %lld has centre %lld (centres must be in [0, %d), "
                             "non-decreasing)",
                             fn, (long long) e, (long long) centre[e], n_centres);
  aisci_status st;
  if ((st = ensure((void **) &out->edge_index, &out->cap_edge, E, 2 * sizeof(int64_t),
                   "edge index")) != AISCI_OK ||
      (st = ensure((void **) &out->edge_vec, &out->cap_vec, E, 3 * sizeof(double),
                   "edge vectors")) != AISCI_OK ||
      (st = ensure((void **) &out->edge_shift, &out->cap_shift, E, 3 * sizeof(int),
                   "edge shifts")) != AISCI_OK ||
      (st = ensure((void **) &out->nbr, &out->cap_nbr, E, sizeof(int64_t), "neighbours")) !=
          AISCI_OK ||
      (st = ensure((void **) &out->trip, &out->cap_trip, T, 2 * sizeof(int64_t), "triplets")) !=
          AISCI_OK)
    return st;
  /* edges of the kept centres in order; a kept edge's new id is its old id minus the
   * dropped edges before it, and triplets (grouped by centre, like the edges) follow */
  int64_t n = 0, t = 0, removed = 0, k = 0;
  for (int64_t e = 0; e < E; e++) {
    if (dest[centre[e]] != rank) {
      removed++;
      continue;
    }
    out->edge_index[n] = centre[e];
    out->nbr[n] = g->edge_index[E + e];
    memcpy(out->edge_vec + 3 * n, g->edge_vec + 3 * e, 3 * sizeof(double));
    memcpy(out->edge_shift + 3 * n, g->edge_shift + 3 * e, 3 * sizeof(int));
    n++;
    /* the triplets whose first edge is e */
    for (; k < T && g->trip[2 * k] < e; k++) {}
    for (; k < T && g->trip[2 * k] == e; k++, t++) {
      out->trip[2 * t] = g->trip[2 * k] - removed;
      out->trip[2 * t + 1] = g->trip[2 * k + 1] - removed;
    }
  }
  if (n > 0) memcpy(out->edge_index + n, out->nbr, (size_t) n * sizeof(int64_t));
  out->nedge = n;
  out->ntrip = t;
  out->natoms = g->natoms;
  return AISCI_OK;
}
