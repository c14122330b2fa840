/* PPPM node layout, error path: the solver of a node runs out of memory while it takes
 * the charge patches of its node's ranks. Every rank must get AISCI_ERR_ALLOC from
 * aisci_pppm_solve() (the solver's own ranks through its reply, the other solvers
 * through their agreement), nobody may hang, and the object must work again at the
 * next step. The failure is injected by a realloc() of this executable that refuses
 * large requests while armed (the core's buffers grow through realloc). Pretend nodes of
 * 2 ranks; at 1 rank the solver's only patch is its own (no larger request to refuse):
 * the error path is then not reached and the test says so. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisci_testing/pppm.h"
#include "aisci_test.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NO_INJECTION 1 /* the sanitizers own realloc(): no second replacement */
#endif
static volatile size_t fail_above; /* 0 = off */
static volatile int fail_count;
#ifndef NO_INJECTION
extern void *__libc_realloc(void *ptr, size_t size);

/* default visibility: the build hides symbols unless told */
__attribute__((visibility("default"))) void *realloc(void *ptr, size_t size)
{
  if (fail_above && size > fail_above) {
    fail_count++;
    return NULL;
  }
  return __libc_realloc(ptr, size);
}
#endif

#define N 200
static const double BOX = 12.0;

int main(int argc, char **argv)
{
  int provided, rank, nprocs;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
#ifdef NO_INJECTION
  if (rank == 0) printf("SKIPPED: sanitizer build, realloc() cannot be replaced\n");
  MPI_Finalize();
  return 77;
#endif
  aisci_pppm_config cfg = aisci_pppm_config_default();
  for (int d = 0; d < 3; d++) cfg.box[d][d] = BOX;
  cfg.grid[0] = cfg.grid[1] = cfg.grid[2] = 60; /* patch 216000 values: 2 message chunks */
  cfg.g_ewald = 0.35;
  cfg.layout = AISCI_PPPM_LAYOUT_NODE;
  cfg.ranks_per_node = 2;
  /* charges all over the box (every rank's patch is the whole mesh), and a small
   * cluster (small patches, small buffers) */
  double x[3 * N], xs[3 * N], q[N], f[3 * N], fref[3 * N];
  srand(17 + rank);
  for (int i = 0; i < N; i++) {
    for (int d = 0; d < 3; d++) {
      x[3 * i + d] = BOX * rand() / (double) RAND_MAX;
      xs[3 * i + d] = 5.0 + 1.0 * rand() / (double) RAND_MAX;
    }
    q[i] = i % 2 ? 1.0 : -1.0;
  }
  aisci_pppm *p = NULL;
  CHECK(aisci_pppm_create(&cfg, MPI_COMM_WORLD, &p) == AISCI_OK, "create: %s", aisci_last_error());
  aisci_pppm_info info;
  aisci_pppm_get_info(p, &info);
  double e_ref = 0.0, e = 0.0;
  memset(f, 0, sizeof(f));
  CHECK(aisci_pppm_compute(p, N, xs, q, NULL, NULL, f, NULL) == AISCI_OK, "small step");

  /* the full-box step on its own first (reference), in a second object */
  aisci_pppm *pr = NULL;
  CHECK(aisci_pppm_create(&cfg, MPI_COMM_WORLD, &pr) == AISCI_OK, "create reference");
  memset(fref, 0, sizeof(fref));
  CHECK(aisci_pppm_compute(pr, N, x, q, NULL, &e_ref, fref, NULL) == AISCI_OK, "reference");
  aisci_pppm_destroy(pr);

  if (info.node_ranks < 2) {
    if (rank == 0)
      printf("1 rank per node: the solver receives no other patch, error path not "
             "reachable here (run at 2 or 4 ranks)\n");
  } else {
    /* spread sizes this rank's planes for 3 x (own patch) (charges, later the field
     * components); the solver then asks for 3 x (its node's patches) = twice that, and
     * for 3 x (node patch) = 3 x (own patch) again: refuse requests between the two
     * sizes (buffers grow to what is asked, or 1.5 x their capacity, whichever is
     * larger: aisci_grow), on rank 0 only */
    const size_t own = (size_t) 60 * 60 * 60 * sizeof(double);
    CHECK(aisci_pppm_spread(p, N, x, q) == AISCI_OK, "spread: %s", aisci_last_error());
    if (rank == 0) fail_above = (size_t) (4.5 * own);
    aisci_status st = aisci_pppm_solve(p, &e, NULL);
    fail_above = 0;
    int got = fail_count;
    MPI_Bcast(&got, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(got > 0, "the injected failure was reached (%d refused requests)", got);
    CHECK(st == AISCI_ERR_ALLOC,
          "rank %d (solver %d): solve gives %d (%s), expected "
          "AISCI_ERR_ALLOC",
          rank, info.solver, (int) st, aisci_last_error());
    if (rank == 0) printf("rank 0: %s\n", aisci_last_error());
    if (rank == 1) printf("rank 1: %s\n", aisci_last_error());
    /* the next step runs and gives the reference */
    memset(f, 0, sizeof(f));
    CHECK(aisci_pppm_compute(p, N, x, q, NULL, &e, f, NULL) == AISCI_OK,
          "step after the failure: %s", aisci_last_error());
    double df = 0.0, fm = 0.0;
    for (int i = 0; i < 3 * N; i++) {
      df = fmax(df, fabs(f[i] - fref[i]));
      fm = fmax(fm, fabs(fref[i]));
    }
    CHECK(fabs(e - e_ref) <= 1e-12 * fabs(e_ref) && df <= 1e-12 * fm,
          "after the failure: energy %.17g vs %.17g, force diff %.3g of %.3g", e, e_ref, df, fm);
  }
  aisci_pppm_destroy(p);
  int failed = aisci_test_failed, anyfail;
  MPI_Allreduce(&failed, &anyfail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank != 0) aisci_test_quiet = 1;
  int rc = aisci_test_summary("test_pppm_node_oom");
  MPI_Finalize();
  return anyfail ? 1 : rc;
}
