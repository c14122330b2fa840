/* aisci_ringlb_evaluate under MPI (run with 1, 2 and 4 ranks): one whole balanced
 * evaluation with a model callback, against the same model called directly on each
 * rank's whole graph (no balancing).
 *
 * System: atoms in z-slabs, one per rank, with fewer atoms on higher ranks (so the ring
 * moves work); each rank's graph has its owned atoms first, then the other ranks' atoms
 * within the cutoff of its slab as ghosts. Model: a one-cutoff toy, per-atom energy
 * E_c = sum over c's edges of phi(v) + sum over c's triplets of k v1 . v2, with the
 * forces and (per-atom) virials of the edge-vector gradient, as aisci_model_compute
 * defines them. Checked: energies, per-atom energies, forces on all graph atoms, global
 * and per-atom virial at the three virial levels, a plan reused for new positions, a new
 * plan for a new build, the statistics (plans, evaluations, items moved, summed over the
 * ranks). Error paths: NULL arguments (AISCI_ERR_ARG on every rank, exact status), a
 * callback that fails on one rank (every rank fails with its status, the failing rank
 * keeps its message, the others name it; no hang), then a successful call again. */
#include "aisci/graph.h"
#include "aisci/ringlb.h"
#include "aisci_test.h"

#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

enum { PER_RANK0 = 96 };
static const double RC = 2.0, RC3 = 1.4, SLAB = 3.0, WIDTH = 7.0;

/* ---- the toy model, as a callback ---- */
typedef struct {
  int fail_rank; /* -1: never fails */
  int calls;
} toy_ctx;

static aisci_status toy_model(void *ctx, int64_t n_atoms, const int64_t *types, int64_t ne,
                              const int64_t *ei, const double *ev, int64_t nt, const int64_t *trip,
                              int64_t n_energy, double *energy, double *pae, double *f, double *w,
                              double *wa)
{
  toy_ctx *c = ctx;
  c->calls++;
  if (c->fail_rank == rank)
    return aisci_set_error(AISCI_ERR_MODEL, "toy model: failing on purpose on rank %d", rank);
  double *g = calloc(3 * (size_t) ne + 1, sizeof(double)); /* dE/dv per edge */
  memset(pae, 0, sizeof(double) * (size_t) n_atoms);
  for (int64_t e = 0; e < ne; e++) {
    const double *v = ev + 3 * e;
    const double a = 0.3 + 0.1 * (double) types[ei[ne + e]], b = -0.2, cc = 0.05;
    pae[ei[e]] += a * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + b * v[0] + cc * v[0] * v[1];
    g[3 * e] += 2 * a * v[0] + b + cc * v[1];
    g[3 * e + 1] += 2 * a * v[1] + cc * v[0];
    g[3 * e + 2] += 2 * a * v[2];
  }
  const double k = 0.07;
  for (int64_t t = 0; t < nt; t++) {
    const int64_t e1 = trip[2 * t], e2 = trip[2 * t + 1];
    const double *v1 = ev + 3 * e1, *v2 = ev + 3 * e2;
    pae[ei[e1]] += k * (v1[0] * v2[0] + v1[1] * v2[1] + v1[2] * v2[2]);
    for (int d = 0; d < 3; d++) {
      g[3 * e1 + d] += k * v2[d];
      g[3 * e2 + d] += k * v1[d];
    }
  }
  memset(f, 0, sizeof(double) * 3 * (size_t) n_atoms);
  if (w) memset(w, 0, sizeof(double) * 9);
  if (wa) memset(wa, 0, sizeof(double) * 9 * (size_t) n_atoms);
  for (int64_t e = 0; e < ne; e++) {
    const int64_t i = ei[e], j = ei[ne + e];
    const double *v = ev + 3 * e, *ge = g + 3 * e;
    for (int d = 0; d < 3; d++) {
      f[3 * i + d] += ge[d];
      f[3 * j + d] -= ge[d];
    }
    for (int p = 0; p < 3; p++)
      for (int q = 0; q < 3; q++) {
        const double x = -v[p] * ge[q];
        if (w) w[3 * p + q] += x;
        if (wa) {
          wa[9 * i + 3 * p + q] += 0.5 * x;
          wa[9 * j + 3 * p + q] += 0.5 * x;
        }
      }
  }
  double sum = 0.0;
  for (int64_t i = 0; i < n_energy; i++) sum += pae[i];
  *energy = sum;
  free(g);
  return AISCI_OK;
}

/* ---- the system ---- */
static uint64_t mix(uint64_t z)
{
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static double urand(uint64_t key)
{
  return (double) (mix(key) >> 11) / 9007199254740992.0;
}

/* atoms of slab r: fewer on higher ranks; position of atom i at step s */
static int slab_atoms(int r)
{
  return PER_RANK0 / (r + 1) + 4;
}
static void position(int r, int i, int step, double x[3])
{
  const uint64_t key = ((uint64_t) r << 40) ^ ((uint64_t) i << 8);
  x[0] = WIDTH * urand(key + 1);
  x[1] = WIDTH * urand(key + 2);
  x[2] = SLAB * (r + urand(key + 3));
  for (int d = 0; d < 3; d++) x[d] += 0.05 * step * (urand(key + 10 + d + 16 * step) - 0.5);
  if (x[2] < SLAB * r) x[2] = SLAB * r; /* stays in its slab */
  if (x[2] >= SLAB * (r + 1)) x[2] = SLAB * (r + 1) - 1e-9;
}

typedef struct {
  int n, n_local;
  double *x;
  int64_t *types;
  aisci_graph *g;
} system_t;

static void make_system(system_t *s, int step)
{
  int n = 0, cap = 0;
  for (int r = 0; r < size; r++) cap += slab_atoms(r);
  s->x = malloc(sizeof(double) * 3 * (size_t) cap);
  s->types = malloc(sizeof(int64_t) * (size_t) cap);
  const double zlo = SLAB * rank - RC, zhi = SLAB * (rank + 1) + RC;
  for (int pass = 0; pass < 2; pass++) /* owned atoms first, then ghosts */
    for (int r = 0; r < size; r++) {
      if ((pass == 0) != (r == rank)) continue;
      for (int i = 0; i < slab_atoms(r); i++) {
        double x[3];
        position(r, i, step, x);
        if (pass == 1 && (x[2] < zlo || x[2] >= zhi)) continue;
        memcpy(s->x + 3 * n, x, sizeof(x));
        s->types[n++] = (r + i) % 3;
      }
      if (pass == 0) s->n_local = n;
    }
  s->n = n;
  aisci_graph_create(&s->g);
  CHECK(aisci_graph_build(s->g, n, s->x, s->n_local, RC, RC3) == AISCI_OK, "graph build: %s",
        aisci_last_error());
}

static void free_system(system_t *s)
{
  aisci_graph_destroy(s->g);
  free(s->x);
  free(s->types);
}

static double max_abs_diff(const double *a, const double *b, size_t n)
{
  double m = 0.0;
  for (size_t i = 0; i < n; i++)
    if (fabs(a[i] - b[i]) > m) m = fabs(a[i] - b[i]);
  return m;
}

/* evaluate at one virial level and compare with the direct call */
static void compare(aisci_ringlb *lb, const system_t *s, int64_t build, int level, int want_pae,
                    const char *what)
{
  const int n = s->n;
  toy_ctx ctx = {-1, 0};
  double e_ref, w_ref[9], e, w[9];
  double *pae_ref = malloc(sizeof(double) * (size_t) n + 8);
  double *f_ref = malloc(sizeof(double) * 3 * (size_t) n + 8);
  double *wa_ref = malloc(sizeof(double) * 9 * (size_t) n + 8);
  double *pae = malloc(sizeof(double) * (size_t) n + 8);
  double *f = malloc(sizeof(double) * 3 * (size_t) n + 8);
  double *wa = malloc(sizeof(double) * 9 * (size_t) n + 8);
  const aisci_graph *g = s->g;
  toy_model(&ctx, n, s->types, aisci_graph_num_edges(g), aisci_graph_edge_index(g),
            aisci_graph_edge_vec(g), aisci_graph_num_triplets(g), aisci_graph_triplets(g),
            s->n_local, &e_ref, pae_ref, f_ref, w_ref, wa_ref);
  const aisci_status st = aisci_ringlb_evaluate(lb, g, build, n, s->n_local, s->types, RC3,
                                                toy_model, &ctx, &e, want_pae ? pae : NULL, f,
                                                level >= 1 ? w : NULL, level == 2 ? wa : NULL);
  CHECK(st == AISCI_OK, "%s: evaluate: %s", what, aisci_last_error());
  if (st == AISCI_OK) {
    const double tol = 1e-12;
    CHECK(fabs(e - e_ref) <= tol * (1.0 + fabs(e_ref)), "%s: energy %.17g vs %.17g", what, e,
          e_ref);
    if (want_pae)
      CHECK(max_abs_diff(pae, pae_ref, (size_t) s->n_local) <= tol, "%s: per-atom energies", what);
    CHECK(max_abs_diff(f, f_ref, 3 * (size_t) n) <= tol, "%s: forces differ by %g", what,
          max_abs_diff(f, f_ref, 3 * (size_t) n));
    if (level >= 1) CHECK(max_abs_diff(w, w_ref, 9) <= tol * 100, "%s: virial", what);
    if (level == 2)
      CHECK(max_abs_diff(wa, wa_ref, 9 * (size_t) n) <= tol, "%s: per-atom virial", what);
    /* the whole system's energy: the same sum over ranks */
    double sums[2] = {e, e_ref}, all[2];
    MPI_Allreduce(sums, all, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK(fabs(all[0] - all[1]) <= tol * (1.0 + fabs(all[1])), "%s: total energy", what);
  }
  free(pae_ref), free(f_ref), free(wa_ref), free(pae), free(f), free(wa);
}

static void test_success(void)
{
  aisci_ringlb_config cfg = aisci_ringlb_config_default();
  aisci_ringlb *lb = NULL;
  CHECK(aisci_ringlb_create(&cfg, MPI_COMM_WORLD, &lb) == AISCI_OK, "create");
  system_t s;
  make_system(&s, 0);
  compare(lb, &s, 1, 2, 1, "build 1, per-atom virial");
  compare(lb, &s, 1, 1, 1, "build 1, global virial");
  compare(lb, &s, 1, 0, 0, "build 1, no virial, no per-atom energies");

  aisci_ringlb_stats st;
  CHECK(aisci_ringlb_get_stats(lb, &st) == AISCI_OK, "stats");
  CHECK(st.n_plans == 1 && st.n_evaluations == 3, "one plan, three evaluations: %lld, %lld",
        (long long) st.n_plans, (long long) st.n_evaluations);
  int64_t sent = st.n_sent, sent_all = 0;
  MPI_Allreduce(&sent, &sent_all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  CHECK(st.n_sent_all == sent_all, "n_sent_all %lld = sum of n_sent %lld",
        (long long) st.n_sent_all, (long long) sent_all);
  if (size > 1) CHECK(st.n_sent_all > 0, "the slab distribution moves work");
  double after = st.cost_after, max_after = 0.0;
  MPI_Allreduce(&after, &max_after, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  CHECK(st.max_cost_after == max_after, "max_cost_after");
  CHECK(st.max_cost_after <= st.max_cost_before, "balanced: %g <= %g", st.max_cost_after,
        st.max_cost_before);
  CHECK(st.model_cpu >= 0.0 && st.model_wall >= 0.0 && st.exchange_wall >= 0.0, "timers");

  /* the plan serves new positions (same build: same items, other edges) */
  system_t s1;
  make_system(&s1, 1);
  compare(lb, &s1, 1, 2, 1, "build 1, moved atoms");
  compare(lb, &s1, 2, 2, 1, "build 2");
  CHECK(aisci_ringlb_get_stats(lb, &st) == AISCI_OK && st.n_plans == 2 && st.n_evaluations == 5,
        "two plans, five evaluations");
  free_system(&s1);
  free_system(&s);
  aisci_ringlb_destroy(lb);
}

static void test_errors(void)
{
  aisci_ringlb_config cfg = aisci_ringlb_config_default();
  aisci_ringlb *lb = NULL;
  CHECK(aisci_ringlb_create(&cfg, MPI_COMM_WORLD, &lb) == AISCI_OK, "create");
  system_t s;
  make_system(&s, 0);
  const int n = s.n, nl = s.n_local, bad = size - 1;
  double e, w[9], *f = malloc(sizeof(double) * 3 * (size_t) n);
  toy_ctx ctx = {-1, 0};
  aisci_status st;

  /* no balancer: this rank only */
  st = aisci_ringlb_evaluate(NULL, s.g, 1, n, nl, s.types, RC3, toy_model, &ctx, &e, NULL, f, w,
                             NULL);
  CHECK(st == AISCI_ERR_ARG, "NULL lb: %d", (int) st);

  /* NULL arguments on every rank, then on one rank only: every rank fails */
  st = aisci_ringlb_evaluate(lb, s.g, 1, n, nl, s.types, RC3, toy_model, &ctx, &e, NULL, NULL, w,
                             NULL);
  CHECK(st == AISCI_ERR_ARG, "NULL forces: %d", (int) st);
  st = aisci_ringlb_evaluate(lb, rank == bad ? NULL : s.g, 1, n, nl, s.types, RC3, toy_model, &ctx,
                             &e, NULL, f, w, NULL);
  CHECK(st == AISCI_ERR_ARG, "NULL graph on rank %d: %d", bad, (int) st);
  if (rank == bad)
    CHECK(strstr(aisci_last_error(), "NULL graph") != NULL, "own message: %s", aisci_last_error());
  else
    CHECK(strstr(aisci_last_error(), "failed on rank") != NULL &&
              strstr(aisci_last_error(), "NULL graph") != NULL,
          "message of the failing rank: %s", aisci_last_error());
  st = aisci_ringlb_evaluate(lb, s.g, 1, n, nl, s.types, RC3, NULL, &ctx, &e, NULL, f, w, NULL);
  CHECK(st == AISCI_ERR_ARG, "NULL model: %d", (int) st);
  st = aisci_ringlb_evaluate(lb, s.g, 1, n, n + 1, s.types, RC3, toy_model, &ctx, &e, NULL, f, w,
                             NULL);
  CHECK(st == AISCI_ERR_ARG, "n_items > n_atoms: %d", (int) st);

  /* a plan, then other items without a new build */
  st =
      aisci_ringlb_evaluate(lb, s.g, 1, n, nl, s.types, RC3, toy_model, &ctx, &e, NULL, f, w, NULL);
  CHECK(st == AISCI_OK, "evaluate: %s", aisci_last_error());
  st = aisci_ringlb_evaluate(lb, s.g, 1, n, rank == bad ? nl - 1 : nl, s.types, RC3, toy_model,
                             &ctx, &e, NULL, f, w, NULL);
  CHECK(st == AISCI_ERR_ARG, "items changed on rank %d without a new build: %d", bad, (int) st);

  /* a callback that fails on one rank: every rank fails with its status, no hang */
  toy_ctx failing = {bad, 0};
  st = aisci_ringlb_evaluate(lb, s.g, 1, n, nl, s.types, RC3, toy_model, &failing, &e, NULL, f, w,
                             NULL);
  CHECK(st == AISCI_ERR_MODEL, "failing callback on rank %d: status %d", bad, (int) st);
  char want[128];
  snprintf(want, sizeof want, "toy model: failing on purpose on rank %d", bad);
  if (rank == bad)
    CHECK(strcmp(aisci_last_error(), want) == 0, "the callback's message unchanged: %s",
          aisci_last_error());
  else
    CHECK(strstr(aisci_last_error(), want) != NULL, "others name it: %s", aisci_last_error());

  /* and the next call works again (it plans again) */
  compare(lb, &s, 1, 2, 1, "after the errors");

  /* a balancer whose payload unit is not a double */
  aisci_ringlb *lb1 = NULL;
  cfg.unit_bytes = 1;
  CHECK(aisci_ringlb_create(&cfg, MPI_COMM_WORLD, &lb1) == AISCI_OK, "create, unit_bytes 1");
  st = aisci_ringlb_evaluate(lb1, s.g, 1, n, nl, s.types, RC3, toy_model, &ctx, &e, NULL, f, w,
                             NULL);
  CHECK(st == AISCI_ERR_ARG, "unit_bytes 1: %d", (int) st);
  aisci_ringlb_destroy(lb1);

  free(f);
  free_system(&s);
  aisci_ringlb_destroy(lb);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  test_success();
  test_errors();
  int failed = aisci_test_failed, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank != 0) aisci_test_quiet = 1;
  const int rc = aisci_test_summary("test_ringlb_evaluate");
  MPI_Finalize();
  return any ? 1 : rc;
}
