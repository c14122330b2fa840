/* bench/ring_balance: the ring balancer's transport (aisci_testing/ringlb.h) on a water
 * slab with vacuum.
 *
 * System: nx x nx x nx water molecules on a simple-cubic lattice at liquid density
 * (3.104 A spacing, random orientations, O-H 0.9572 A, HOH 104.52 deg) filling the lower
 * half of a box twice as tall as wide; the ranks own equal slices along z (like LAMMPS's
 * `processors 1 1 *`), so the upper half of the ranks owns vacuum only. Every owned atom
 * is one work item: payload (type, n, n x (type_j, dx, dy, dz)), cost 1 + n, results
 * (E_i, dE_i/d(x_j - x_i)). The "model" is a one-cutoff toy network with the shape of a
 * descriptor NN: K radial features with smooth cutoff, weighted by the type pair, summed
 * over neighbours, then a tanh MLP with H hidden units; the gradient is back-propagated
 * by hand. Its cost is proportional to the neighbour count, like a real local model.
 *
 * Prints: cost max/mean before and after planning; the model's CPU time per rank
 * (max/mean) and the step wall time (median over steps) without and with the ring;
 * the plan time, exchange time and bytes sent; whether the results with the ring are
 * bit-identical to those without. CPU times (CLOCK_THREAD_CPUTIME_ID) stay meaningful
 * when ranks share cores; wall times do not (a warning says so).
 *
 * Build and run: bench/ring_balance/ring_balance.py (compiles this file with mpicc
 * against a build's libaisci_core). Arguments: [nx] [steps] [rc] [K] [H] [tolerance]. */
#include "aisci_testing/ringlb.h"

#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t mix(uint64_t z)
{
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static double urand(uint64_t key) { return (double) (mix(key) >> 11) / 9007199254740992.0; }

static double cpu_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* ---- the toy network ---- */
typedef struct {
  int K, H;
  double rc, gamma;
  double *mu;   /* K centres */
  double *a;    /* 2 x 2 x K type-pair weights */
  double *W1;   /* H x K */
  double *b1;   /* H */
  double *w2;   /* H */
} toy_net;

static void net_init(toy_net *n, int K, int H, double rc)
{
  n->K = K;
  n->H = H;
  n->rc = rc;
  n->gamma = (K / rc) * (K / rc) * 0.5;
  n->mu = malloc(sizeof(double) * K);
  n->a = malloc(sizeof(double) * 4 * K);
  n->W1 = malloc(sizeof(double) * H * K);
  n->b1 = malloc(sizeof(double) * H);
  n->w2 = malloc(sizeof(double) * H);
  for (int k = 0; k < K; k++) n->mu[k] = 0.5 + (rc - 0.5) * k / (K - 1);
  for (int i = 0; i < 4 * K; i++) n->a[i] = 0.5 + urand(100 + i);
  for (int i = 0; i < H * K; i++) n->W1[i] = (urand(10000 + i) - 0.5) * 0.2;
  for (int i = 0; i < H; i++) {
    n->b1[i] = urand(20000 + i) - 0.5;
    n->w2[i] = urand(30000 + i) - 0.5;
  }
}

static void net_free(toy_net *n)
{
  free(n->mu);
  free(n->a);
  free(n->W1);
  free(n->b1);
  free(n->w2);
}

/* env = (type, n, n x (type_j, dx, dy, dz)) -> res = (E, n x 3 gradient); work: 2K + 2H */
static void net_eval(const toy_net *n, const double *env, double *res, double *work)
{
  const int K = n->K, H = n->H, ti = (int) env[0], nn = (int) env[1];
  double *d = work, *dEdd = work + K, *h = work + 2 * K;
  for (int k = 0; k < K; k++) d[k] = 0.0;
  for (int j = 0; j < nn; j++) {
    const double *v = env + 2 + 4 * j;
    const double r = sqrt(v[1] * v[1] + v[2] * v[2] + v[3] * v[3]);
    const double fc = 0.5 * (cos(M_PI * r / n->rc) + 1.0);
    const double *a = n->a + (2 * ti + (int) v[0]) * K;
    for (int k = 0; k < K; k++) d[k] += a[k] * exp(-n->gamma * (r - n->mu[k]) * (r - n->mu[k])) * fc;
  }
  double e = 0.0;
  for (int i = 0; i < H; i++) {
    double s = n->b1[i];
    for (int k = 0; k < K; k++) s += n->W1[i * K + k] * d[k];
    h[i] = tanh(s);
    e += n->w2[i] * h[i];
  }
  for (int k = 0; k < K; k++) dEdd[k] = 0.0;
  for (int i = 0; i < H; i++) {
    const double gi = n->w2[i] * (1.0 - h[i] * h[i]);
    for (int k = 0; k < K; k++) dEdd[k] += gi * n->W1[i * K + k];
  }
  res[0] = e;
  for (int j = 0; j < nn; j++) {
    const double *v = env + 2 + 4 * j;
    const double r = sqrt(v[1] * v[1] + v[2] * v[2] + v[3] * v[3]);
    const double fc = 0.5 * (cos(M_PI * r / n->rc) + 1.0);
    const double dfc = -0.5 * M_PI / n->rc * sin(M_PI * r / n->rc);
    const double *a = n->a + (2 * ti + (int) v[0]) * K;
    double dr = 0.0;
    for (int k = 0; k < K; k++) {
      const double x = r - n->mu[k], g = exp(-n->gamma * x * x);
      dr += dEdd[k] * a[k] * (g * dfc - 2.0 * n->gamma * x * g * fc);
    }
    for (int c = 0; c < 3; c++) res[1 + 3 * j + c] = dr * v[1 + c] / r;
  }
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int nx = argc > 1 ? atoi(argv[1]) : 10, nsteps = argc > 2 ? atoi(argv[2]) : 5;
  const double rc = argc > 3 ? atof(argv[3]) : 6.0;
  const int K = argc > 4 ? atoi(argv[4]) : 32, H = argc > 5 ? atoi(argv[5]) : 64;
  const double tol = argc > 6 ? atof(argv[6]) : 0.05;

  /* ---- the slab: every rank builds all atoms and keeps its slice ---- */
  const double a0 = 3.104, L = nx * a0, Lz = 2.0 * L;
  const int nmol = nx * nx * nx, natoms = 3 * nmol;
  double *x = malloc(sizeof(double) * 3 * natoms);
  int *type = malloc(sizeof(int) * natoms);
  const double roh = 0.9572, half = 0.5 * 104.52 * M_PI / 180.0;
  for (int m = 0; m < nmol; m++) {
    const double o[3] = {(m % nx + 0.5) * a0, ((m / nx) % nx + 0.5) * a0, (m / (nx * nx) + 0.5) * a0};
    /* random orientation: bisector u, in-plane normal w */
    double u[3], w[3], t[3];
    const double ct = 2 * urand(3 * m) - 1, ph = 2 * M_PI * urand(3 * m + 1), st = sqrt(1 - ct * ct);
    u[0] = st * cos(ph), u[1] = st * sin(ph), u[2] = ct;
    t[0] = fabs(u[0]) < 0.9 ? 1 : 0, t[1] = fabs(u[0]) < 0.9 ? 0 : 1, t[2] = 0;
    w[0] = u[1] * t[2] - u[2] * t[1], w[1] = u[2] * t[0] - u[0] * t[2], w[2] = u[0] * t[1] - u[1] * t[0];
    const double wn = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    for (int c = 0; c < 3; c++) {
      w[c] /= wn;
      x[9 * m + c] = o[c];
      x[9 * m + 3 + c] = o[c] + roh * (cos(half) * u[c] + sin(half) * w[c]);
      x[9 * m + 6 + c] = o[c] + roh * (cos(half) * u[c] - sin(half) * w[c]);
    }
    type[3 * m] = 0;
    type[3 * m + 1] = type[3 * m + 2] = 1;
  }
  /* owned atoms: z slice [rank Lz / size, (rank+1) Lz / size) after wrapping */
  int *own = malloc(sizeof(int) * natoms), nown = 0;
  for (int i = 0; i < natoms; i++) {
    double z = fmod(x[3 * i + 2] + Lz, Lz);
    int r = (int) (z / Lz * size);
    if (r >= size) r = size - 1;
    if (r == rank) own[nown++] = i;
  }
  /* environments (brute force, minimum image in all directions) */
  int64_t *poff = malloc(sizeof(int64_t) * (nown + 1)), *roff = malloc(sizeof(int64_t) * (nown + 1));
  double *cost = malloc(sizeof(double) * (nown + 1));
  size_t cap = 1024;
  double *pay = malloc(sizeof(double) * cap);
  poff[0] = roff[0] = 0;
  const double box[3] = {L, L, Lz};
  for (int q = 0; q < nown; q++) {
    const int i = own[q];
    int64_t p = poff[q];
    if ((size_t) p + 2 + 4 * (size_t) natoms > cap) {
      while ((size_t) p + 2 + 4 * (size_t) natoms > cap) cap *= 2;
      pay = realloc(pay, sizeof(double) * cap);
    }
    pay[p] = type[i];
    int n = 0;
    for (int j = 0; j < natoms; j++) {
      if (j == i) continue;
      double dv[3], r2 = 0.0;
      for (int c = 0; c < 3; c++) {
        dv[c] = x[3 * j + c] - x[3 * i + c];
        dv[c] -= box[c] * round(dv[c] / box[c]);
        r2 += dv[c] * dv[c];
      }
      if (r2 >= rc * rc) continue;
      double *e = pay + p + 2 + 4 * n++;
      e[0] = type[j], e[1] = dv[0], e[2] = dv[1], e[3] = dv[2];
    }
    pay[p + 1] = n;
    poff[q + 1] = p + 2 + 4 * n;
    roff[q + 1] = roff[q] + 1 + 3 * n;
    cost[q] = 1.0 + n;
  }
  toy_net net;
  net_init(&net, K, H, rc);
  double *work = malloc(sizeof(double) * (2 * K + H));
  double *ref = malloc(sizeof(double) * (roff[nown] + 1)), *got = malloc(sizeof(double) * (roff[nown] + 1));

  /* ---- without the ring ---- */
  double *t_plain = malloc(sizeof(double) * nsteps), cpu_plain = 0.0;
  for (int s = 0; s < nsteps; s++) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double w0 = MPI_Wtime(), c0 = cpu_now();
    for (int q = 0; q < nown; q++) net_eval(&net, pay + poff[q], ref + roff[q], work);
    cpu_plain += cpu_now() - c0;
    MPI_Barrier(MPI_COMM_WORLD);
    t_plain[s] = MPI_Wtime() - w0;
  }
  cpu_plain /= nsteps;

  /* ---- with the ring ---- */
  aisci_ringlb_config cfg = {.tolerance = tol};
  aisci_ringlb *lb = NULL;
  if (aisci_ringlb_create(&cfg, MPI_COMM_WORLD, &lb) != AISCI_OK) {
    fprintf(stderr, "create: %s\n", aisci_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  double w0 = MPI_Wtime();
  if (aisci_ringlb_plan(lb, nown, cost) != AISCI_OK) {
    fprintf(stderr, "plan: %s\n", aisci_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const double t_plan = MPI_Wtime() - w0;
  double *t_ring = malloc(sizeof(double) * nsteps), cpu_ring = 0.0, t_xchg = 0.0;
  double *fres = NULL;
  size_t fcap = 0;
  for (int s = 0; s < nsteps; s++) {
    MPI_Barrier(MPI_COMM_WORLD);
    w0 = MPI_Wtime();
    if (aisci_ringlb_send_work(lb, poff, pay, roff) != AISCI_OK) {
      fprintf(stderr, "send_work: %s\n", aisci_last_error());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const double w1 = MPI_Wtime(), c0 = cpu_now();
    int nf, nk;
    const int64_t *fpo, *fro;
    const void *fp;
    const int *kept;
    aisci_ringlb_foreign(lb, &nf, &fpo, &fp, &fro);
    aisci_ringlb_kept(lb, &nk, &kept);
    if ((size_t) fro[nf] + 1 > fcap) {
      fcap = (size_t) fro[nf] + 1;
      fres = realloc(fres, sizeof(double) * fcap);
    }
    for (int k = 0; k < nk; k++) net_eval(&net, pay + poff[kept[k]], got + roff[kept[k]], work);
    for (int f = 0; f < nf; f++) net_eval(&net, (const double *) fp + fpo[f], fres + fro[f], work);
    cpu_ring += cpu_now() - c0;
    const double w2 = MPI_Wtime();
    if (aisci_ringlb_return_results(lb, fres, got) != AISCI_OK) {
      fprintf(stderr, "return_results: %s\n", aisci_last_error());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const double w3 = MPI_Wtime();
    t_xchg += (w1 - w0) + (w3 - w2);
    MPI_Barrier(MPI_COMM_WORLD);
    t_ring[s] = MPI_Wtime() - w0;
  }
  cpu_ring /= nsteps;
  t_xchg /= nsteps;
  int same = roff[nown] == 0 || memcmp(ref, got, sizeof(double) * roff[nown]) == 0, allsame;
  MPI_Allreduce(&same, &allsame, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);

  /* ---- report ---- */
  aisci_ringlb_stats st;
  aisci_ringlb_get_stats(lb, &st);
  double cmax = 0.0;
  for (int q = 0; q < nown; q++) cmax = cost[q] > cmax ? cost[q] : cmax;
  double v[6] = {st.cost_after, cpu_plain, cpu_ring, t_xchg, (double) st.bytes_sent, cmax}, mx[6], sm[6];
  MPI_Allreduce(v, mx, 6, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(v, sm, 6, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  int nown_max, nown_min;
  MPI_Allreduce(&nown, &nown_max, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&nown, &nown_min, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  /* median step times */
  for (int s = 0; s < nsteps; s++)
    for (int u = s + 1; u < nsteps; u++) {
      if (t_plain[u] < t_plain[s]) { double tmp = t_plain[s]; t_plain[s] = t_plain[u]; t_plain[u] = tmp; }
      if (t_ring[u] < t_ring[s]) { double tmp = t_ring[s]; t_ring[s] = t_ring[u]; t_ring[u] = tmp; }
    }
  if (rank == 0) {
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    printf("ring_balance: %d ranks, %d atoms (%d molecules) in a slab filling the lower half of "
           "%.1f x %.1f x %.1f A, rc %.1f A, toy net K=%d H=%d, tolerance %.3f, %d steps\n",
           size, natoms, nmol, L, L, Lz, rc, K, H, tol, nsteps);
    printf("  atoms per rank: %d..%d\n", nown_min, nown_max);
    printf("  cost max/mean: before %.4f after %.4f (guaranteed <= 1 + c_max/mean = %.4f: %s)\n",
           st.mean_cost > 0 ? st.max_cost_before / st.mean_cost : 0.0,
           st.mean_cost > 0 ? mx[0] / st.mean_cost : 0.0,
           st.mean_cost > 0 ? 1.0 + mx[5] / st.mean_cost : 0.0,
           st.balanced ? "balanced, nothing moved" : mx[0] <= st.mean_cost + mx[5] ? "holds" : "VIOLATED");
    printf("  model CPU time per rank, max/mean: without %.4f s / %.4f s = %.3f, with %.4f s / %.4f s = %.3f\n",
           mx[1], sm[1] / size, mx[1] / (sm[1] / size), mx[2], sm[2] / size, mx[2] / (sm[2] / size));
    printf("  step wall time (median): without %.4f s, with %.4f s (plan %.4f s once; exchange "
           "%.4f s per step, max over ranks; %.0f kB sent per step in all)\n",
           t_plain[nsteps / 2], t_ring[nsteps / 2], t_plan, mx[3], sm[4] / 1024.0);
    printf("  projected step on dedicated cores: without %.4f s, with %.4f s + exchange\n", mx[1], mx[2]);
    printf("  results with the ring bit-identical to without: %s\n", allsame ? "yes" : "NO");
    if (cores < size)
      printf("  note: %d ranks on %ld cores: wall times include waiting for a core; compare CPU times\n",
             size, cores);
  }
  aisci_ringlb_destroy(lb);
  net_free(&net);
  free(x), free(type), free(own), free(poff), free(roff), free(cost), free(pay), free(work);
  free(ref), free(got), free(t_plain), free(t_ring), free(fres);
  MPI_Finalize();
  return allsame ? 0 : 1;
}
