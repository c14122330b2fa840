/* aisci_pimd_step (run with 1, 2 and 4 ranks; each rank runs its own ring polymer on
 * MPI_COMM_SELF, all P beads local, and the universe-wide checks use MPI_COMM_WORLD).
 * - The step runs the named splitting: begin + forces + end equals, bit for bit, the
 *   kernel sequence of aisci/pimd.h written out by hand (OBABO: O B A | B O with the COM
 *   removal after each O; BAOAB: B A O A | B), for NVT and NVE.
 * - Rows are used in place whatever their stride: the same steps on an interleaved
 *   per-atom layout (stride 11) give the same bits as on contiguous arrays, and so do rows
 *   picked by an index list out of a larger array (a group of atoms), whose other rows
 *   stay untouched.
 * - The output layout (10, 15, 17 values and their extensive flags) and the error paths
 *   (NULL arguments, beads outside 0..P-1, several beads with method pimd, stride < 3,
 *   a barostat without the beads' virials). */
#include "aisci/pimd_step.h"
#include "aisci_testing/pimd.h"
#include "aisci_test.h"

#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

enum { P = 4, N = 5, STRIDE = 11 };
static double mass[N] = {1.0, 2.0, 16.0, 1.0, 3.5};
static int64_t tags[N] = {3, 9, 10, 11, 40};

static aisci_pimd *make(aisci_pimd_integrator integ, aisci_pimd_ensemble ens)
{
  aisci_pimd_config c = aisci_pimd_config_default();
  c.nbeads = P;
  c.integrator = integ;
  c.ensemble = ens;
  c.kT = 0.7;
  c.hbar = 0.3;
  c.dt = 0.05;
  c.tau = 0.4;
  c.seed = 1234;
  aisci_pimd *p = NULL;
  CHECK(aisci_pimd_create(&c, &p) == AISCI_OK, "create");
  return p;
}

/* positions, velocities of P modes (n x 3 each), deterministic */
static void fill(double *q, double *v, double *f)
{
  for (int k = 0; k < P; k++)
    for (int i = 0; i < 3 * N; i++) {
      q[k * 3 * N + i] = sin(1.0 + k + 0.37 * i);
      v[k * 3 * N + i] = cos(2.0 + 0.5 * k + 0.11 * i);
      f[k * 3 * N + i] = sin(0.3 * k - 0.7 * i); /* bead forces */
    }
}

static void com(const aisci_pimd *p, double *v0)
{
  (void) p;
  double s[4] = {0, 0, 0, 0};
  for (int i = 0; i < N; i++) {
    for (int d = 0; d < 3; d++) s[d] += mass[i] * v0[3 * i + d];
    s[3] += mass[i];
  }
  for (int d = 0; d < 3; d++) s[d] /= s[3];
  for (int i = 0; i < N; i++)
    for (int d = 0; d < 3; d++) v0[3 * i + d] -= s[d];
}

static void hand_o(const aisci_pimd *p, double *v, double h, uint64_t *counter)
{
  for (int k = 0; k < P; k++) aisci_pimd_o_step(p, k, N, tags, mass, v + k * 3 * N, h, *counter);
  (*counter)++;
  com(p, v);
}

static void hand_b(const aisci_pimd *p, const double *fm, double *v, double h)
{
  for (int k = 0; k < P; k++) aisci_pimd_b_step(p, k, N, mass, fm + k * 3 * N, v + k * 3 * N, h);
}

static void hand_a(const aisci_pimd *p, double *q, double *v, double h)
{
  for (int k = 0; k < P; k++) aisci_pimd_a_step(p, k, N, q + k * 3 * N, v + k * 3 * N, h);
}

/* one step by hand: returns q, v after begin+forces+end */
static void by_hand(const aisci_pimd *p, double *q, double *v, double *fm, const double *fb)
{
  const aisci_pimd_config *c = aisci_pimd_get_config(p);
  const int thermo = c->ensemble == AISCI_PIMD_NVT;
  const double dt = c->dt;
  uint64_t counter = 0;
  if (c->integrator == AISCI_PIMD_OBABO) {
    if (thermo) hand_o(p, v, 0.5 * dt, &counter);
    hand_b(p, fm, v, 0.5 * dt);
    hand_a(p, q, v, dt);
  } else {
    hand_b(p, fm, v, 0.5 * dt);
    hand_a(p, q, v, 0.5 * dt);
    if (thermo) hand_o(p, v, dt, &counter);
    hand_a(p, q, v, 0.5 * dt);
  }
  for (int k = 0; k < P; k++) aisci_pimd_to_mode(p, k, N, fb, fm + k * 3 * N);
  hand_b(p, fm, v, 0.5 * dt);
  if (c->integrator == AISCI_PIMD_OBABO && thermo) hand_o(p, v, 0.5 * dt, &counter);
}

/* the same step through the driver, on rows of the given stride; with `indexed`, the N
 * atoms are rows 2N-1, 2N-3, ... of an array of 2N rows (index list), and the other rows
 * hold a sentinel that the step must leave alone */
static const double SENTINEL = -12345.5;
static void by_step(aisci_pimd *p, aisci_beadcomm *bc, double *q, double *v, double *fm,
                    const double *fb, int stride, int indexed)
{
  aisci_pimd_step *s = NULL;
  CHECK(aisci_pimd_step_create(p, P, 0, 1, MPI_COMM_SELF, MPI_COMM_SELF, bc, &s) == AISCI_OK,
        "step_create");
  /* per atom: q v f of each bead at offsets 0, 3, 6 (+ 9 k * stride when interleaved) */
  const int nrows = indexed ? 2 * N : N;
  double *store = calloc((size_t) P * nrows * (stride > 3 ? stride : 9), sizeof(double));
  int index[N];
  for (int i = 0; i < N; i++) index[i] = indexed ? 2 * N - 1 - 2 * i : i;
  if (indexed)
    for (int r = 0; r < nrows * stride; r++) store[r] = SENTINEL;
  aisci_pimd_rows rq[P], rv[P], rf[P];
  for (int k = 0; k < P; k++) {
    if (stride == 3) {
      rq[k] = (aisci_pimd_rows){q + k * 3 * N, 3, NULL};
      rv[k] = (aisci_pimd_rows){v + k * 3 * N, 3, NULL};
      rf[k] = (aisci_pimd_rows){fm + k * 3 * N, 3, NULL};
    } else {
      /* atom i's block: P beads x (q v f) = 9 P values, stride >= 9 P */
      rq[k] = (aisci_pimd_rows){store + 9 * k, stride, indexed ? index : NULL};
      rv[k] = (aisci_pimd_rows){store + 9 * k + 3, stride, indexed ? index : NULL};
      rf[k] = (aisci_pimd_rows){store + 9 * k + 6, stride, indexed ? index : NULL};
      for (int i = 0; i < N; i++)
        for (int d = 0; d < 3; d++) {
          rq[k].data[index[i] * stride + d] = q[k * 3 * N + 3 * i + d];
          rv[k].data[index[i] * stride + d] = v[k * 3 * N + 3 * i + d];
          rf[k].data[index[i] * stride + d] = fm[k * 3 * N + 3 * i + d];
        }
    }
  }
  aisci_pimd_local loc = {N, mass, tags, rq, rv, rf};
  aisci_pimd_state st;
  memset(&st, 0, sizeof(st));
  aisci_pimd_box_scaling box;
  CHECK(aisci_pimd_step_begin(s, &loc, &st, 1.0, &box) == AISCI_OK && box.count == 0, "begin");
  CHECK(aisci_pimd_step_forces(s, &loc, &st, fb, NULL, NULL, 0, NULL,
                               (aisci_pimd_rows){NULL, 3, NULL}) == AISCI_OK,
        "forces");
  CHECK(aisci_pimd_step_end(s, &loc, &st, 1.0) == AISCI_OK, "end");
  if (stride != 3)
    for (int k = 0; k < P; k++)
      for (int i = 0; i < N; i++)
        for (int d = 0; d < 3; d++) {
          q[k * 3 * N + 3 * i + d] = rq[k].data[index[i] * stride + d];
          v[k * 3 * N + 3 * i + d] = rv[k].data[index[i] * stride + d];
          fm[k * 3 * N + 3 * i + d] = rf[k].data[index[i] * stride + d];
        }
  if (indexed) {
    int untouched = 1;
    for (int r = 0; r < nrows; r += 2)
      for (int c = 0; c < stride; c++) untouched &= store[r * stride + c] == SENTINEL;
    CHECK(untouched, "rows outside the index list are left alone");
  }
  free(store);
  aisci_pimd_step_destroy(s);
}

static void test_splitting(aisci_beadcomm *bc)
{
  const aisci_pimd_integrator integ[2] = {AISCI_PIMD_OBABO, AISCI_PIMD_BAOAB};
  const aisci_pimd_ensemble ens[2] = {AISCI_PIMD_NVT, AISCI_PIMD_NVE};
  for (int a = 0; a < 2; a++)
    for (int b = 0; b < 2; b++) {
      aisci_pimd *p = make(integ[a], ens[b]);
      double q[4][P * 3 * N], v[4][P * 3 * N], fm[4][P * 3 * N], fb[P * 3 * N];
      for (int r = 0; r < 4; r++) fill(q[r], v[r], fb);
      for (int r = 0; r < 4; r++) memcpy(fm[r], fb, sizeof(fb)); /* "last step's" mode forces */
      by_hand(p, q[0], v[0], fm[0], fb);
      by_step(p, bc, q[1], v[1], fm[1], fb, 3, 0);
      by_step(p, bc, q[2], v[2], fm[2], fb, 9 * P + STRIDE, 0);
      by_step(p, bc, q[3], v[3], fm[3], fb, 9 * P + STRIDE, 1);
      CHECK(memcmp(q[0], q[1], sizeof(q[0])) == 0 && memcmp(v[0], v[1], sizeof(v[0])) == 0 &&
                memcmp(fm[0], fm[1], sizeof(fm[0])) == 0,
            "%s %s: the step equals the hand-written kernel sequence bit for bit",
            a ? "BAOAB" : "OBABO", b ? "NVE" : "NVT");
      CHECK(memcmp(q[1], q[2], sizeof(q[0])) == 0 && memcmp(v[1], v[2], sizeof(v[0])) == 0 &&
                memcmp(fm[1], fm[2], sizeof(fm[0])) == 0,
            "%s %s: strided rows give the same bits as contiguous ones", a ? "BAOAB" : "OBABO",
            b ? "NVE" : "NVT");
      CHECK(memcmp(q[1], q[3], sizeof(q[0])) == 0 && memcmp(v[1], v[3], sizeof(v[0])) == 0 &&
                memcmp(fm[1], fm[3], sizeof(fm[0])) == 0,
            "%s %s: rows picked by an index list give the same bits as contiguous ones",
            a ? "BAOAB" : "OBABO", b ? "NVE" : "NVT");
      double moved = 0.0;
      for (int i = 0; i < P * 3 * N; i++)
        moved += fabs(v[1][i] - cos(2.0 + 0.5 * (i / (3 * N)) + 0.11 * (i % (3 * N))));
      CHECK(moved > 1e-3, "the step changed the velocities (%g)", moved);
      aisci_pimd_destroy(p);
    }
}

/* aisci_pimd_step_positions writes the same bead positions and centroids into rows picked
 * by an index list (a group) as into contiguous rows, and leaves the other rows alone;
 * with n = 0 and an index list it does nothing. */
static void test_positions_indexed(aisci_beadcomm *bc)
{
  aisci_pimd *p = make(AISCI_PIMD_OBABO, AISCI_PIMD_NVT);
  aisci_pimd_step *s = NULL;
  CHECK(aisci_pimd_step_create(p, P, 0, 1, MPI_COMM_SELF, MPI_COMM_SELF, bc, &s) == AISCI_OK,
        "step_create (positions)");
  double modes[P * 3 * N], dummy_v[P * 3 * N], dummy_f[P * 3 * N];
  fill(modes, dummy_v, dummy_f);
  enum { W = 3 * P + 3 };    /* per row: P beads, then the centroid */
  double flat[P][3 * N], cen[3 * N], big[2 * N * W];
  for (int r = 0; r < 2 * N * W; r++) big[r] = SENTINEL;
  int index[N];
  for (int i = 0; i < N; i++) index[i] = 2 * N - 1 - 2 * i;
  aisci_pimd_rows rf[P], ri[P];
  for (int k = 0; k < P; k++) {
    rf[k] = (aisci_pimd_rows){flat[k], 3, NULL};
    ri[k] = (aisci_pimd_rows){big + 3 * k, W, index};
  }
  CHECK(aisci_pimd_step_positions(s, N, modes, rf, (aisci_pimd_rows){cen, 3, NULL}) == AISCI_OK &&
            aisci_pimd_step_positions(s, N, modes, ri, (aisci_pimd_rows){big + 3 * P, W, index}) ==
                AISCI_OK,
        "positions: contiguous and indexed rows");
  int same = 1, untouched = 1;
  for (int i = 0; i < N; i++)
    for (int d = 0; d < 3; d++) {
      for (int k = 0; k < P; k++) same &= big[index[i] * W + 3 * k + d] == flat[k][3 * i + d];
      same &= big[index[i] * W + 3 * P + d] == cen[3 * i + d];
    }
  for (int r = 0; r < 2 * N; r += 2)
    for (int c = 0; c < W; c++) untouched &= big[r * W + c] == SENTINEL;
  CHECK(same, "positions: indexed rows get the same beads and centroids bit for bit");
  CHECK(untouched, "positions: rows outside the index list are left alone");
  CHECK(aisci_pimd_step_positions(s, 0, NULL, NULL, (aisci_pimd_rows){NULL, W, index}) == AISCI_OK,
        "positions: n = 0 with an index list");
  aisci_pimd_step_destroy(s);
  aisci_pimd_destroy(p);
}

static void test_layout_and_errors(aisci_beadcomm *bc)
{
  aisci_pimd_config c = aisci_pimd_config_default();
  int nv = 0, ext[AISCI_PIMD_MAXVALUES];
  CHECK(aisci_pimd_output_layout(&c, &nv, ext) == AISCI_OK && nv == 10, "NVT: 10 values");
  CHECK(ext[0] && ext[6] && !ext[7] && !ext[9], "NVT: energies extensive, pressures not");
  c.ensemble = AISCI_PIMD_NPT;
  CHECK(aisci_pimd_output_layout(&c, &nv, ext) == AISCI_OK && nv == 15 && !ext[10] && ext[11] &&
            ext[14],
        "NPT iso: 15 values, strain rate intensive, cell energies extensive");
  c.pstyle = AISCI_PIMD_ANISO;
  CHECK(aisci_pimd_output_layout(&c, &nv, ext) == AISCI_OK && nv == 17 && !ext[12] && ext[13] &&
            ext[16],
        "NPT aniso: 17 values");
  CHECK(aisci_pimd_output_layout(NULL, &nv, ext) == AISCI_ERR_ARG, "layout NULL config");

  aisci_pimd *p = make(AISCI_PIMD_OBABO, AISCI_PIMD_NVT);
  aisci_pimd_step *s = NULL;
  CHECK(aisci_pimd_step_create(NULL, 1, 0, 1, MPI_COMM_SELF, MPI_COMM_SELF, bc, &s) ==
                AISCI_ERR_ARG &&
            !s,
        "create: NULL integrator");
  CHECK(aisci_pimd_step_create(p, 1, 0, 1, MPI_COMM_SELF, MPI_COMM_SELF, NULL, &s) == AISCI_ERR_ARG,
        "create: NULL exchange");
  CHECK(aisci_pimd_step_create(p, 2, 3, 1, MPI_COMM_SELF, MPI_COMM_SELF, bc, &s) == AISCI_ERR_ARG,
        "create: beads 3..4 outside 0..3");
  CHECK(aisci_pimd_step_create(p, 0, 0, 1, MPI_COMM_SELF, MPI_COMM_SELF, bc, &s) == AISCI_ERR_ARG,
        "create: K = 0");
  CHECK(aisci_pimd_set_dt(p, -1.0) == AISCI_ERR_ARG && aisci_pimd_set_dt(p, 0.01) == AISCI_OK &&
            aisci_pimd_get_config(p)->dt == 0.01,
        "set_dt refuses dt <= 0 and takes 0.01");
  CHECK(aisci_pimd_step_create(p, P, 0, 1, MPI_COMM_SELF, MPI_COMM_SELF, bc, &s) == AISCI_OK,
        "create");
  double q[3 * N] = {0}, v[3 * N] = {0}, f[3 * N] = {0};
  aisci_pimd_rows rq[P], rv[P], rf[P];
  for (int k = 0; k < P; k++) {
    rq[k] = (aisci_pimd_rows){q, 2, NULL}; /* bad stride */
    rv[k] = (aisci_pimd_rows){v, 3, NULL};
    rf[k] = (aisci_pimd_rows){f, 3, NULL};
  }
  aisci_pimd_local loc = {N, mass, tags, rq, rv, rf};
  aisci_pimd_state st;
  memset(&st, 0, sizeof(st));
  aisci_pimd_box_scaling box;
  CHECK(aisci_pimd_step_begin(s, &loc, &st, 1.0, &box) == AISCI_ERR_ARG, "begin: stride 2 refused");
  CHECK(strstr(aisci_last_error(), "stride 2") != NULL, "message names the stride: %s",
        aisci_last_error());
  CHECK(aisci_pimd_step_begin(s, &loc, &st, 1.0, NULL) == AISCI_ERR_ARG, "begin: NULL box");
  CHECK(aisci_pimd_step_end(NULL, &loc, &st, 1.0) == AISCI_ERR_ARG, "end: NULL step");
  CHECK(aisci_pimd_step_output(s, &loc, &st, NULL, NULL, N, 1.0, 1.0, (double[17]){0}) ==
            AISCI_ERR_ARG,
        "output: NULL measured values on the partition's rank 0");
  aisci_pimd_step_destroy(s);
  aisci_pimd_destroy(p);

  c = aisci_pimd_config_default();
  c.nbeads = P;
  c.method = AISCI_PIMD_CARTESIAN;
  CHECK(aisci_pimd_create(&c, &p) == AISCI_OK, "create cartesian");
  CHECK(aisci_pimd_step_create(p, 2, 0, 1, MPI_COMM_SELF, MPI_COMM_SELF, bc, &s) == AISCI_ERR_ARG,
        "create: several beads per partition need nmpimd");
  aisci_pimd_destroy(p);
  aisci_pimd_step_destroy(NULL);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  aisci_test_quiet = rank != 0;
  aisci_beadcomm *bc = NULL;
  CHECK(aisci_beadcomm_create(MPI_COMM_SELF, MPI_COMM_SELF, 1, 0, &bc) == AISCI_OK, "beadcomm");
  test_splitting(bc);
  test_positions_indexed(bc);
  test_layout_and_errors(bc);
  aisci_beadcomm_destroy(bc);
  int local[2] = {aisci_test_passed, aisci_test_failed}, total[2];
  MPI_Allreduce(local, total, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  aisci_test_passed = total[0];
  aisci_test_failed = total[1];
  int rc = rank == 0 ? aisci_test_summary("test_pimd_step") : 0;
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}
