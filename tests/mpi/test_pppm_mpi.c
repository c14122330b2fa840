/* PPPM over MPI: the same charges distributed over the ranks of MPI_COMM_WORLD (spatial
 * slabs across the FFT slabs, round robin, one rank empty, fewer grid planes than ranks)
 * must give the single-rank energy, virial and forces to 1e-10 relative; errors found on
 * one rank fail on all; solve() may run on its own thread while the caller's thread
 * communicates (MPI_THREAD_MULTIPLE); the node layout (one solver per real or pretend
 * node) gives the same results, also with the solvers on threads. Runs at 1, 2 and 4
 * ranks. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aisci_testing/pppm.h"
#include "aisci_test.h"
#include "pppm_ewald_ref.h"

#define N 300
#define QQRD2E 332.06371

static const double TRICLINIC[3][3] = {{14.0, 0, 0}, {3.5, 13.0, 0}, {-2.5, 4.0, 15.0}};
static int rank, nprocs;

typedef struct result {
  double energy, virial[6], f[3 * N];
} result;

/* Compute with the atoms for which owner(i) == this rank, forces gathered by index. */
static aisci_status run(const aisci_pppm_config *cfg, MPI_Comm comm, const double *x,
                        const double *q, const int *owner, result *res)
{
  int me;
  MPI_Comm_rank(comm, &me);
  double xl[3 * N], ql[N], fl[3 * N], fall[3 * N];
  int idx[N], n = 0;
  for (int i = 0; i < N; i++)
    if (owner[i] == me) {
      memcpy(xl + 3 * n, x + 3 * i, sizeof(double) * 3);
      ql[n] = q[i];
      idx[n++] = i;
    }
  aisci_pppm *p = NULL;
  aisci_status st = aisci_pppm_create(cfg, comm, &p);
  if (st != AISCI_OK) return st;
  memset(fl, 0, sizeof(fl));
  st = aisci_pppm_compute(p, n, xl, ql, NULL, &res->energy, fl, res->virial);
  aisci_pppm_destroy(p);
  if (st != AISCI_OK) return st;
  memset(fall, 0, sizeof(fall));
  for (int k = 0; k < n; k++) memcpy(fall + 3 * idx[k], fl + 3 * k, sizeof(double) * 3);
  /* each force is non-zero on exactly one rank: the sum is exact */
  MPI_Allreduce(fall, res->f, 3 * N, MPI_DOUBLE, MPI_SUM, comm);
  return AISCI_OK;
}

static void compare(const char *what, const result *a, const result *ref)
{
  double fmaxv = 0.0, df = 0.0, vmax = 0.0, dv = 0.0;
  for (int i = 0; i < 3 * N; i++) {
    fmaxv = fmax(fmaxv, fabs(ref->f[i]));
    df = fmax(df, fabs(a->f[i] - ref->f[i]));
  }
  for (int v = 0; v < 6; v++) {
    vmax = fmax(vmax, fabs(ref->virial[v]));
    dv = fmax(dv, fabs(a->virial[v] - ref->virial[v]));
  }
  double de = fabs(a->energy - ref->energy) / fabs(ref->energy);
  if (rank == 0)
    printf("%-34s %d ranks: energy rel diff %.1e, max force diff %.1e of max, virial %.1e\n", what,
           nprocs, de, df / fmaxv, dv / vmax);
  CHECK(de <= 1e-10, "%s: energy %.15g vs %.15g", what, a->energy, ref->energy);
  CHECK(df <= 1e-10 * fmaxv, "%s: force diff %.3g (max %.3g)", what, df, fmaxv);
  CHECK(dv <= 1e-10 * vmax, "%s: virial diff %.3g", what, dv);
}

typedef struct solve_job {
  aisci_pppm *p;
  double energy;
  aisci_status st;
} solve_job;

static void *solve_thread(void *arg)
{
  solve_job *job = arg;
  job->st = aisci_pppm_solve(job->p, &job->energy, NULL);
  return NULL;
}

int main(int argc, char **argv)
{
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  double x[3 * N], q[N], q2 = 0.0;
  ref_random_system(N, TRICLINIC, 2024, 1, x, q);
  for (int i = 0; i < N; i++) q2 += q[i] * q[i];
  aisci_pppm_config cfg = aisci_pppm_config_default();
  memcpy(cfg.box, TRICLINIC, sizeof(cfg.box));
  cfg.accuracy = 1e-5;
  cfg.cutoff = 7.0;
  cfg.q2sum = q2;
  cfg.natoms = N;
  cfg.qqrd2e = QQRD2E;

  /* Reference: every rank alone on all atoms */
  int owner_self[N];
  memset(owner_self, 0, sizeof(owner_self));
  static result ref, res;
  CHECK(run(&cfg, MPI_COMM_SELF, x, q, owner_self, &ref) == AISCI_OK, "serial: %s",
        aisci_last_error());

  /* Sanity against Ewald (rank 0's reference) */
  {
    aisci_pppm *p = NULL;
    aisci_pppm_info info;
    aisci_pppm_create(&cfg, MPI_COMM_WORLD, &p);
    aisci_pppm_get_info(p, &info);
    if (rank == 0) {
      double er, fr[3 * N];
      memset(fr, 0, sizeof(fr));
      ref_ewald_recip(N, x, q, TRICLINIC, info.g_eff, QQRD2E, &er, fr, NULL);
      double ferr = ref_rms_diff(N, ref.f, fr) / QQRD2E;
      printf("grid %d %d %d, %d local planes on rank 0, rms force error vs Ewald %.2e "
             "(accuracy %.0e), MPI thread level %d\n",
             info.grid[0], info.grid[1], info.grid[2], info.local_planes, ferr, cfg.accuracy,
             info.mpi_thread_level);
      CHECK(ferr <= cfg.accuracy, "force error %.3g", ferr);
    }
    aisci_pppm_destroy(p);
  }

  /* 1. spatial slabs along x (cut across the FFT slabs along c) */
  int owner[N];
  for (int i = 0; i < N; i++) {
    double s = x[3 * i] / 21.0 + 0.2; /* x spans about [-2.5, 17.5] */
    int r = (int) (s * nprocs);
    owner[i] = r < 0 ? 0 : (r >= nprocs ? nprocs - 1 : r);
  }
  CHECK(run(&cfg, MPI_COMM_WORLD, x, q, owner, &res) == AISCI_OK, "slabs: %s", aisci_last_error());
  compare("spatial slabs along x", &res, &ref);

  /* 1b. 2 x 2 blocks in fractional (a, b) that straddle the periodic boundaries, so the
   * patches of touched grid points wrap around */
  {
    double hinv[3][3], vol;
    ref_invert(TRICLINIC, hinv, &vol);
    for (int i = 0; i < N; i++) {
      double sfrac[2];
      for (int d = 0; d < 2; d++) {
        double t = x[3 * i] * hinv[0][d] + x[3 * i + 1] * hinv[1][d] + x[3 * i + 2] * hinv[2][d];
        t += d == 0 ? 0.3 : 0.6;
        sfrac[d] = t - floor(t);
      }
      owner[i] = ((int) (2 * sfrac[0]) + 2 * (int) (2 * sfrac[1])) % nprocs;
    }
    CHECK(run(&cfg, MPI_COMM_WORLD, x, q, owner, &res) == AISCI_OK, "blocks");
    compare("2x2 blocks across the boundaries", &res, &ref);
  }

  /* 2. round robin */
  for (int i = 0; i < N; i++) owner[i] = i % nprocs;
  CHECK(run(&cfg, MPI_COMM_WORLD, x, q, owner, &res) == AISCI_OK, "round robin");
  compare("round robin", &res, &ref);

  /* 3. last rank owns nothing */
  for (int i = 0; i < N; i++) owner[i] = nprocs > 1 ? i % (nprocs - 1) : 0;
  CHECK(run(&cfg, MPI_COMM_WORLD, x, q, owner, &res) == AISCI_OK, "empty rank");
  compare("one rank without atoms", &res, &ref);

  /* 4. fewer grid planes along c than ranks (3 planes, order 3): empty FFT slabs */
  {
    aisci_pppm_config c3 = cfg;
    c3.order = 3;
    c3.grid[0] = 16;
    c3.grid[1] = 15;
    c3.grid[2] = 3;
    c3.g_ewald = 0.3;
    static result ref3;
    for (int i = 0; i < N; i++) owner[i] = (i * 7) % nprocs;
    CHECK(run(&c3, MPI_COMM_SELF, x, q, owner_self, &ref3) == AISCI_OK, "serial 3 planes");
    CHECK(run(&c3, MPI_COMM_WORLD, x, q, owner, &res) == AISCI_OK, "3 planes: %s",
          aisci_last_error());
    compare("3 grid planes, order 3", &res, &ref3);
  }

  /* 4b. ad differentiation (one potential field exchanged, self-force sums reduced) */
  {
    aisci_pppm_config cad = cfg;
    cad.diff = AISCI_PPPM_AD;
    static result refad;
    for (int i = 0; i < N; i++) owner[i] = (i * 5) % nprocs;
    CHECK(run(&cad, MPI_COMM_SELF, x, q, owner_self, &refad) == AISCI_OK, "serial ad");
    CHECK(run(&cad, MPI_COMM_WORLD, x, q, owner, &res) == AISCI_OK, "ad: %s", aisci_last_error());
    compare("ad differentiation", &res, &refad);
  }

  /* 5. a bad atom on rank 0 only: every rank gets the error, the object stays usable */
  {
    aisci_pppm *p = NULL;
    CHECK(aisci_pppm_create(&cfg, MPI_COMM_WORLD, &p) == AISCI_OK, "create");
    double xb[3] = {1.0, NAN, 2.0}, qb[1] = {0.5}, fb[3] = {0, 0, 0};
    int nb = 1;
    double xg[3] = {1.0, 2.0, 3.0};
    aisci_status st = aisci_pppm_spread(p, nb, rank == 0 ? xb : xg, qb);
    CHECK(st == AISCI_ERR_ARG, "rank %d: NaN on rank 0 gives %d", rank, (int) st);
    CHECK(aisci_pppm_compute(p, nb, xg, qb, NULL, NULL, fb, NULL) == AISCI_OK,
          "usable after error: %s", aisci_last_error());
    st = aisci_pppm_spread(p, nb, rank == 0 ? NULL : xg, qb);
    CHECK(st == AISCI_ERR_ARG, "rank %d: NULL x on rank 0 gives %d", rank, (int) st);
    CHECK(aisci_pppm_spread(p, nb, xg, qb) == AISCI_OK &&
              aisci_pppm_solve(p, NULL, NULL) == AISCI_OK,
          "spread, solve");
    st = aisci_pppm_interpolate(p, rank == 0 ? 0 : nb, qb, fb);
    CHECK(st == AISCI_ERR_STATE, "rank %d: wrong n on rank 0 gives %d", rank, (int) st);
    st = aisci_pppm_compute(p, nb, xg, qb, NULL, NULL, rank == 0 ? NULL : fb, NULL);
    CHECK(st == AISCI_ERR_ARG, "rank %d: NULL forces on rank 0 gives %d", rank, (int) st);
    double flat[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 0}};
    st = aisci_pppm_compute(p, nb, xg, qb, rank == 0 ? (const double(*)[3]) flat : NULL, NULL, fb,
                            NULL);
    CHECK(st == AISCI_ERR_ARG, "rank %d: singular box on rank 0 gives %d", rank, (int) st);
    aisci_pppm_destroy(p);
  }

  /* 6. solve on its own thread while this thread communicates on MPI_COMM_WORLD */
  if (provided >= MPI_THREAD_MULTIPLE) {
    for (int i = 0; i < N; i++) owner[i] = i % nprocs;
    double xl[3 * N], ql[N], fl[3 * N], fall[3 * N];
    int idx[N], n = 0;
    for (int i = 0; i < N; i++)
      if (owner[i] == rank) {
        memcpy(xl + 3 * n, x + 3 * i, sizeof(double) * 3);
        ql[n] = q[i];
        idx[n++] = i;
      }
    aisci_pppm *p = NULL;
    CHECK(aisci_pppm_create(&cfg, MPI_COMM_WORLD, &p) == AISCI_OK, "create");
    CHECK(aisci_pppm_spread(p, n, xl, ql) == AISCI_OK, "spread");
    solve_job job = {p, 0.0, AISCI_ERR_INTERNAL};
    pthread_t th;
    pthread_create(&th, NULL, solve_thread, &job);
    /* "the neural network": unrelated collectives on the caller's communicator */
    double busy = 0.0, in;
    for (int k = 0; k < 200; k++) {
      in = rank + k;
      MPI_Allreduce(&in, &busy, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    pthread_join(th, NULL);
    CHECK(job.st == AISCI_OK, "threaded solve: %s", aisci_last_error());
    memset(fl, 0, sizeof(fl));
    CHECK(aisci_pppm_interpolate(p, n, ql, fl) == AISCI_OK, "interpolate");
    memset(fall, 0, sizeof(fall));
    for (int k = 0; k < n; k++) memcpy(fall + 3 * idx[k], fl + 3 * k, sizeof(double) * 3);
    MPI_Allreduce(fall, res.f, 3 * N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    res.energy = job.energy;
    memcpy(res.virial, ref.virial, sizeof(res.virial));
    compare("solve on a second thread", &res, &ref);
    aisci_pppm_destroy(p);
  } else if (rank == 0) {
    printf("MPI_THREAD_MULTIPLE not provided (%d): threaded solve not tested\n", provided);
  }

  /* 7. node layout: one solver per node (node-local rank 0) takes the patches of the
   * node's ranks; real nodes (all ranks here), every rank its own node, pretend nodes of
   * 2 ranks (at 4 ranks: the FFT across 2 solvers) */
  for (int rpn = 0; rpn <= 2; rpn++) {
    aisci_pppm_config cn = cfg;
    cn.layout = AISCI_PPPM_LAYOUT_NODE;
    cn.ranks_per_node = rpn;
    char what[96];
    for (int i = 0; i < N; i++) {
      double s = x[3 * i] / 21.0 + 0.2;
      int r = (int) (s * nprocs);
      owner[i] = r < 0 ? 0 : (r >= nprocs ? nprocs - 1 : r);
    }
    snprintf(what, sizeof what, "node layout, %d ranks per node, slabs", rpn);
    CHECK(run(&cn, MPI_COMM_WORLD, x, q, owner, &res) == AISCI_OK, "%s: %s", what,
          aisci_last_error());
    compare(what, &res, &ref);
    for (int i = 0; i < N; i++) owner[i] = nprocs > 1 ? i % (nprocs - 1) : 0;
    snprintf(what, sizeof what, "node layout, %d ranks per node, last rank empty", rpn);
    CHECK(run(&cn, MPI_COMM_WORLD, x, q, owner, &res) == AISCI_OK, "%s", what);
    compare(what, &res, &ref);
    aisci_pppm_config cad = cn;
    cad.diff = AISCI_PPPM_AD;
    static result refad;
    for (int i = 0; i < N; i++) owner[i] = (i * 5) % nprocs;
    CHECK(run(&cad, MPI_COMM_SELF, x, q, owner_self, &refad) == AISCI_OK, "serial ad");
    snprintf(what, sizeof what, "node layout, %d ranks per node, ad", rpn);
    CHECK(run(&cad, MPI_COMM_WORLD, x, q, owner, &res) == AISCI_OK, "%s", what);
    compare(what, &res, &refad);
    /* the info names the solver */
    aisci_pppm *p = NULL;
    CHECK(aisci_pppm_create(&cn, MPI_COMM_WORLD, &p) == AISCI_OK, "create node layout");
    aisci_pppm_info info;
    aisci_pppm_get_info(p, &info);
    int expect_nodes = rpn == 0 ? 1 : (nprocs + rpn - 1) / rpn;
    CHECK(info.layout == AISCI_PPPM_LAYOUT_NODE && info.nodes == expect_nodes &&
              info.solver == (rpn == 0 ? rank == 0 : rank % rpn == 0),
          "rank %d: node info layout %d nodes %d solver %d", rank, info.layout, info.nodes,
          info.solver);
    /* a bad atom on one rank still fails on all, and the object stays usable */
    double xb[3] = {1.0, NAN, 2.0}, xg[3] = {1.0, 2.0, 3.0}, qb[1] = {0.5}, fb[3] = {0, 0, 0};
    aisci_status st = aisci_pppm_spread(p, 1, rank == nprocs - 1 ? xb : xg, qb);
    CHECK(st == AISCI_ERR_ARG, "rank %d: node layout NaN gives %d", rank, (int) st);
    CHECK(aisci_pppm_compute(p, 1, xg, qb, NULL, NULL, fb, NULL) == AISCI_OK,
          "node layout usable after error: %s", aisci_last_error());
    aisci_pppm_destroy(p);
  }

  /* 8. node layout overlapped: the solvers run solve() on a thread, the other ranks hand
   * their patches off and wait in solve() later, while every rank's main thread does
   * collectives on MPI_COMM_WORLD (pretend nodes of 2 ranks) */
  if (provided >= MPI_THREAD_MULTIPLE) {
    aisci_pppm_config cn = cfg;
    cn.layout = AISCI_PPPM_LAYOUT_NODE;
    cn.ranks_per_node = 2;
    for (int i = 0; i < N; i++) owner[i] = (i * 3) % nprocs;
    double xl[3 * N], ql[N], fl[3 * N], fall[3 * N];
    int idx[N], n = 0;
    for (int i = 0; i < N; i++)
      if (owner[i] == rank) {
        memcpy(xl + 3 * n, x + 3 * i, sizeof(double) * 3);
        ql[n] = q[i];
        idx[n++] = i;
      }
    aisci_pppm *p = NULL;
    CHECK(aisci_pppm_create(&cn, MPI_COMM_WORLD, &p) == AISCI_OK, "create");
    aisci_pppm_info info;
    aisci_pppm_get_info(p, &info);
    CHECK(aisci_pppm_spread(p, n, xl, ql) == AISCI_OK, "spread");
    solve_job job = {p, 0.0, AISCI_ERR_INTERNAL};
    pthread_t th;
    if (info.solver)
      pthread_create(&th, NULL, solve_thread, &job);
    else
      CHECK(aisci_pppm_hand_off(p) == AISCI_OK, "hand off: %s", aisci_last_error());
    double busy = 0.0, in;
    for (int k = 0; k < 200; k++) {
      in = rank + k;
      MPI_Allreduce(&in, &busy, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    if (info.solver)
      pthread_join(th, NULL);
    else
      job.st = aisci_pppm_solve(p, &job.energy, NULL);
    CHECK(job.st == AISCI_OK, "overlapped node solve: %s", aisci_last_error());
    memset(fl, 0, sizeof(fl));
    CHECK(aisci_pppm_interpolate(p, n, ql, fl) == AISCI_OK, "interpolate");
    memset(fall, 0, sizeof(fall));
    for (int k = 0; k < n; k++) memcpy(fall + 3 * idx[k], fl + 3 * k, sizeof(double) * 3);
    MPI_Allreduce(fall, res.f, 3 * N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    res.energy = job.energy;
    memcpy(res.virial, ref.virial, sizeof(res.virial));
    compare("node layout, solve on the solvers' threads", &res, &ref);
    aisci_pppm_destroy(p);
  }

  /* 9. bad layout values are refused */
  {
    aisci_pppm_config cb = cfg;
    aisci_pppm *p = NULL;
    cb.layout = (aisci_pppm_layout) 7;
    CHECK(aisci_pppm_create(&cb, MPI_COMM_WORLD, &p) == AISCI_ERR_ARG && !p, "layout 7");
    cb.layout = AISCI_PPPM_LAYOUT_NODE;
    cb.ranks_per_node = -1;
    CHECK(aisci_pppm_create(&cb, MPI_COMM_WORLD, &p) == AISCI_ERR_ARG && !p, "ranks_per_node -1");
  }

  int failed = aisci_test_failed, anyfail;
  MPI_Allreduce(&failed, &anyfail, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank != 0) aisci_test_quiet = 1;
  int rc = aisci_test_summary("test_pppm_mpi");
  MPI_Finalize();
  return anyfail ? 1 : rc;
}
