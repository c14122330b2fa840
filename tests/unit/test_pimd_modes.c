/* Normal modes of the ring polymer (aisci_pimd_nm_matrix, to_mode/to_bead, spring energies).
 * Everything is checked against independent definitions: the circulant spring matrix
 * A = 2 I - S - S^T (S the cyclic shift), its eigenvalues 2 - 2 cos(2 pi k / P), and the
 * Cartesian spring energy sum_j m omega_P^2 |x_j - x_{j+1}|^2 / 2 computed by hand.
 * aisci_pimd_modes_reproduce against to_bead and moved coordinates. */
#include "aisci_testing/pimd.h"
#include "aisci_test.h"
#include "pimd_values.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846


static const int PLIST[] = {1, 2, 3, 4, 7, 8, 32};
#define NPLIST ((int) (sizeof(PLIST) / sizeof(PLIST[0])))

static aisci_pimd *make(int P, double kT, double hbar, double mvv2e)
{
  aisci_pimd_config c = aisci_pimd_config_default();
  c.nbeads = P;
  c.kT = kT;
  c.hbar = hbar;
  c.mvv2e = mvv2e;
  c.ftm2v = 1.0 / mvv2e;
  aisci_pimd *p = NULL;
  aisci_status st = aisci_pimd_create(&c, &p);
  CHECK(st == AISCI_OK && p, "create P=%d: %s", P, aisci_last_error());
  return p;
}

/* C^T C = I, C C^T = I, C[j][0] = 1/sqrt(P), A C_k = lambda_k C_k */
static void test_matrix(int P)
{
  double *C = malloc(sizeof(double) * P * P);
  double *A = calloc((size_t) P * P, sizeof(double));
  CHECK(aisci_pimd_nm_matrix(P, C) == AISCI_OK, "nm_matrix P=%d", P);
  double err_tc = 0, err_ct = 0, err_c0 = 0, err_eig = 0, err_lam = 0;
  for (int a = 0; a < P; a++)
    for (int b = 0; b < P; b++) {
      double s1 = 0, s2 = 0;
      for (int j = 0; j < P; j++) {
        s1 += C[j * P + a] * C[j * P + b]; /* (C^T C)_{ab} */
        s2 += C[a * P + j] * C[b * P + j]; /* (C C^T)_{ab} */
      }
      double id = (a == b) ? 1.0 : 0.0;
      err_tc = fmax(err_tc, fabs(s1 - id));
      err_ct = fmax(err_ct, fabs(s2 - id));
    }
  for (int j = 0; j < P; j++) err_c0 = fmax(err_c0, fabs(C[j * P] - 1.0 / sqrt((double) P)));
  /* ring spring matrix: (A x)_j = 2 x_j - x_{j-1} - x_{j+1} (P = 1: zero; P = 2: both
   * neighbours are the other bead) */
  for (int j = 0; j < P; j++) {
    A[j * P + j] += 2.0;
    A[j * P + (j + 1) % P] -= 1.0;
    A[j * P + (j + P - 1) % P] -= 1.0;
  }
  double lamsum = 0;
  for (int k = 0; k < P; k++) {
    double lam = pv_lambda(P, k);
    double lam_ref = 2.0 - 2.0 * cos(2.0 * PI * k / P);
    err_lam = fmax(err_lam, fabs(lam - lam_ref));
    lamsum += lam;
    for (int j = 0; j < P; j++) {
      double s = 0;
      for (int l = 0; l < P; l++) s += A[j * P + l] * C[l * P + k];
      err_eig = fmax(err_eig, fabs(s - lam * C[j * P + k]));
    }
  }
  CHECK(err_tc < 1e-13, "P=%d: max |C^T C - I| = %g", P, err_tc);
  CHECK(err_ct < 1e-13, "P=%d: max |C C^T - I| = %g", P, err_ct);
  CHECK(err_c0 < 1e-15, "P=%d: max |C[j][0] - 1/sqrt(P)| = %g", P, err_c0);
  CHECK(err_lam < 1e-13, "P=%d: lambda_k vs 2 - 2 cos(2 pi k/P): %g", P, err_lam);
  CHECK(err_eig < 1e-12, "P=%d: max |A C_k - lambda_k C_k| = %g", P, err_eig);
  /* trace of A = 2P (0 for P = 1) = sum of eigenvalues */
  CHECK_CLOSE(lamsum, P == 1 ? 0.0 : 2.0 * P, 1e-11, "sum of lambda_k = trace A");
  CHECK(pv_lambda(P, 0) == 0.0, "P=%d: lambda_0 must be exactly 0", P);
  free(C);
  free(A);
}

/* bead -> mode -> bead round trip, mode -> bead -> mode, and agreement with C */
static void test_transforms(int P)
{
  const int n = 5;
  const size_t m = 3 * n;
  aisci_pimd *p = make(P, 0.7, 1.3, 1.0);
  if (!p) return;
  double *C = malloc(sizeof(double) * P * P);
  aisci_pimd_nm_matrix(P, C);
  double *x = malloc(sizeof(double) * P * m), *q = malloc(sizeof(double) * P * m);
  double *y = malloc(sizeof(double) * P * m), *q2 = malloc(sizeof(double) * P * m);
  for (size_t a = 0; a < P * m; a++) x[a] = 10.0 * aisci_test_srand1();
  int ok = 1;
  for (int k = 0; k < P; k++) ok &= aisci_pimd_to_mode(p, k, n, x, q + k * m) == AISCI_OK;
  for (int j = 0; j < P; j++) ok &= aisci_pimd_to_bead(p, j, n, q, y + j * m) == AISCI_OK;
  for (int k = 0; k < P; k++) ok &= aisci_pimd_to_mode(p, k, n, y, q2 + k * m) == AISCI_OK;
  CHECK(ok, "P=%d: transforms returned an error: %s", P, aisci_last_error());
  double err_rt = 0, err_c = 0, err_rt2 = 0, err_centroid = 0;
  for (size_t a = 0; a < P * m; a++) {
    err_rt = fmax(err_rt, fabs(y[a] - x[a]));
    err_rt2 = fmax(err_rt2, fabs(q2[a] - q[a]));
  }
  for (int k = 0; k < P; k++)
    for (size_t a = 0; a < m; a++) {
      double s = 0;
      for (int j = 0; j < P; j++) s += C[j * P + k] * x[j * m + a];
      err_c = fmax(err_c, fabs(s - q[k * m + a]));
    }
  /* q_0 = sqrt(P) * centroid */
  for (size_t a = 0; a < m; a++) {
    double c = 0;
    for (int j = 0; j < P; j++) c += x[j * m + a];
    c /= P;
    err_centroid = fmax(err_centroid, fabs(q[a] / sqrt((double) P) - c));
  }
  CHECK(err_rt < 1e-12, "P=%d: bead->mode->bead round trip error %g", P, err_rt);
  CHECK(err_rt2 < 1e-12, "P=%d: mode->bead->mode round trip error %g", P, err_rt2);
  CHECK(err_c < 1e-12, "P=%d: to_mode differs from sum_j C[j][k] x_j by %g", P, err_c);
  CHECK(err_centroid < 1e-12, "P=%d: q_0 / sqrt(P) differs from the centroid by %g", P, err_centroid);
  /* in place is not promised, but n = 0 with NULL arrays is fine */
  CHECK(aisci_pimd_to_mode(p, 0, 0, NULL, NULL) == AISCI_OK, "to_mode with n = 0");
  CHECK(aisci_pimd_to_bead(p, 0, 0, NULL, NULL) == AISCI_OK, "to_bead with n = 0");
  free(x);
  free(q);
  free(y);
  free(q2);
  free(C);
  aisci_pimd_destroy(p);
}

/* sum_k spring_mode(q_k) = sum_j spring_bead(x_j) = hand-computed Cartesian spring energy;
 * spring_bead forces = -dE/dx and = the mode-space force transformed back */
static void test_springs(int P)
{
  const int n = 4;
  const size_t m = 3 * n;
  const double kT = 0.9, hbar = 0.35, mvv2e = 2.5;
  aisci_pimd *p = make(P, kT, hbar, mvv2e);
  if (!p) return;
  const double wp = P * kT / hbar;
  CHECK_CLOSE(pv_omega_p(p), wp, 1e-12 * wp, "omega_P = P kT / hbar");
  double mass[4] = {1.0, 2.0, 16.0, 0.5};
  double *x = malloc(sizeof(double) * P * m), *q = malloc(sizeof(double) * P * m);
  double *f = calloc(P * m, sizeof(double)), *fk = malloc(sizeof(double) * P * m);
  double *fb = malloc(sizeof(double) * m);
  for (size_t a = 0; a < P * m; a++) x[a] = aisci_test_srand1();
  for (int k = 0; k < P; k++) aisci_pimd_to_mode(p, k, n, x, q + k * m);
  double e_mode = 0, e_bead = 0, e_hand = 0;
  for (int k = 0; k < P; k++) e_mode += pv_spring_mode(p, k, n, mass, q + k * m);
  for (int j = 0; j < P; j++) e_bead += pv_spring_bead(p, j, n, mass, x, f + j * m);
  for (int j = 0; j < P; j++)
    for (int i = 0; i < n; i++)
      for (int d = 0; d < 3; d++) {
        double dx = x[j * m + 3 * i + d] - x[((j + 1) % P) * m + 3 * i + d];
        e_hand += 0.5 * mvv2e * mass[i] * wp * wp * dx * dx;
      }
  double scale = fmax(1.0, fabs(e_hand));
  CHECK_CLOSE(e_bead, e_hand, 1e-12 * scale, "sum_j spring_bead vs hand-computed spring energy");
  CHECK_CLOSE(e_mode, e_hand, 1e-11 * scale, "sum_k spring_mode vs Cartesian spring energy");
  if (P == 1) CHECK(e_bead == 0.0 && e_mode == 0.0, "P = 1 has no springs (%g, %g)", e_bead, e_mode);
  /* mode-space spring force of mode k: -mvv2e m omega_P^2 lambda_k q_k, back to beads */
  for (int k = 0; k < P; k++) {
    double lam = pv_lambda(P, k);
    for (int i = 0; i < n; i++)
      for (int d = 0; d < 3; d++)
        fk[k * m + 3 * i + d] = -mvv2e * mass[i] * wp * wp * lam * q[k * m + 3 * i + d];
  }
  double err_f = 0, err_fd = 0, fmaxabs = 1e-300;
  for (int j = 0; j < P; j++) {
    aisci_pimd_to_bead(p, j, n, fk, fb);
    for (size_t a = 0; a < m; a++) {
      err_f = fmax(err_f, fabs(fb[a] - f[j * m + a]));
      fmaxabs = fmax(fmaxabs, fabs(f[j * m + a]));
    }
  }
  CHECK(err_f <= 1e-11 * fmaxabs + 1e-300 || P == 1,
        "P=%d: spring_bead force vs mode-space force differ by %g (max force %g)", P, err_f, fmaxabs);
  /* central finite difference of the total spring energy (quadratic: exact up to rounding) */
  const double eps = 1e-4;
  for (int t = 0; t < 6; t++) {
    int j = (int) (aisci_test_urand() * P), a = (int) (aisci_test_urand() * m);
    double save = x[j * m + a];
    double ep = 0, em = 0;
    x[j * m + a] = save + eps;
    for (int jj = 0; jj < P; jj++) ep += pv_spring_bead(p, jj, n, mass, x, NULL);
    x[j * m + a] = save - eps;
    for (int jj = 0; jj < P; jj++) em += pv_spring_bead(p, jj, n, mass, x, NULL);
    x[j * m + a] = save;
    err_fd = fmax(err_fd, fabs(-(ep - em) / (2 * eps) - f[j * m + a]));
  }
  CHECK(err_fd <= 1e-6 * fmaxabs + 1e-12, "P=%d: spring force vs -dE/dx differ by %g", P, err_fd);
  free(x);
  free(q);
  free(f);
  free(fk);
  free(fb);
  aisci_pimd_destroy(p);
}

/* spring_bead by hand on two atoms and three beads with ftm2v != 1 / mvv2e: the force is
 * -mvv2e m omega_P^2 (2 x_j - x_{j-1} - x_{j+1}) (energy / length; ftm2v plays no part), it
 * is added to f, f may be NULL, and the energy carries mvv2e */
static void test_spring_bead_units(void)
{
  aisci_pimd_config c = aisci_pimd_config_default();
  c.nbeads = 3;
  c.kT = 0.5;
  c.hbar = 0.75; /* omega_P = 3 * 0.5 / 0.75 = 2 */
  c.mvv2e = 2.5;
  c.ftm2v = 7.0;
  aisci_pimd *p = NULL;
  CHECK(aisci_pimd_create(&c, &p) == AISCI_OK, "create: %s", aisci_last_error());
  if (!p) return;
  const double mass[2] = {1.0, 3.0};
  /* beads[j][atom][d] */
  const double x[3][6] = {{0, 0, 0, 1, 1, 1}, {1, 0, -1, 1, 2, 1}, {0.5, 2, 0, 1, 1, 3}};
  /* bead 1: 2 x_1 - x_0 - x_2 = atom 0 (1.5, -2, -2), atom 1 (0, 2, -2); factor mvv2e m w^2 = 10 m */
  double f[6] = {1, 1, 1, 1, 1, 1};
  const double ref[6] = {1 - 15, 1 + 20, 1 + 20, 1 - 0, 1 - 60, 1 + 60};
  const double e = pv_spring_bead(p, 1, 2, mass, &x[0][0], f);
  for (int a = 0; a < 6; a++) CHECK_CLOSE(f[a], ref[a], 1e-13, "spring_bead force added to f");
  /* spring 1-2: atom 0 |(0.5, -2, -1)|^2 = 5.25, atom 1 |(0, 1, -2)|^2 = 5: 5 (5.25 + 3 * 5) */
  CHECK_CLOSE(e, 5.0 * (5.25 + 15.0), 1e-12, "spring_bead energy carries mvv2e");
  CHECK_CLOSE(pv_spring_bead(p, 1, 2, mass, &x[0][0], NULL), e, 0.0, "spring_bead with f = NULL");
  aisci_pimd_destroy(p);
  /* one bead: no springs, f untouched */
  c.nbeads = 1;
  CHECK(aisci_pimd_create(&c, &p) == AISCI_OK, "create P = 1");
  if (!p) return;
  double f1[6] = {1, 2, 3, 4, 5, 6};
  CHECK(pv_spring_bead(p, 0, 2, mass, &x[0][0], f1) == 0.0, "P = 1 spring energy");
  for (int a = 0; a < 6; a++) CHECK(f1[a] == a + 1, "P = 1 changed f[%d]", a);
  aisci_pimd_destroy(p);
}

static void test_errors(void)
{
  double C[4], x[6] = {0}, y[6] = {0}, mass[2] = {1, 1};
  CHECK(aisci_pimd_nm_matrix(0, C) == AISCI_ERR_ARG, "nm_matrix P = 0");
  CHECK(aisci_pimd_nm_matrix(-3, C) == AISCI_ERR_ARG, "nm_matrix P < 0");
  CHECK(aisci_pimd_nm_matrix(2, NULL) == AISCI_ERR_ARG, "nm_matrix NULL output");
  aisci_pimd *p = make(2, 1.0, 1.0, 1.0);
  if (!p) return;
  CHECK(aisci_pimd_to_mode(p, 2, 1, x, y) == AISCI_ERR_ARG, "to_mode k = P");
  CHECK(aisci_pimd_to_mode(p, -1, 1, x, y) == AISCI_ERR_ARG, "to_mode k < 0");
  CHECK(aisci_pimd_to_mode(p, 0, -1, x, y) == AISCI_ERR_ARG, "to_mode n < 0");
  CHECK(aisci_pimd_to_mode(p, 0, 1, NULL, y) == AISCI_ERR_ARG, "to_mode NULL input");
  CHECK(aisci_pimd_to_mode(p, 0, 1, x, NULL) == AISCI_ERR_ARG, "to_mode NULL output");
  CHECK(aisci_pimd_to_mode(NULL, 0, 1, x, y) == AISCI_ERR_ARG, "to_mode NULL integrator");
  CHECK(aisci_pimd_to_bead(p, 2, 1, x, y) == AISCI_ERR_ARG, "to_bead j = P");
  CHECK(aisci_pimd_to_bead(p, 0, 1, NULL, y) == AISCI_ERR_ARG, "to_bead NULL input");
  CHECK(aisci_pimd_to_bead(NULL, 0, 1, x, y) == AISCI_ERR_ARG, "to_bead NULL integrator");
  CHECK(aisci_pimd_spring_mode(p, 5, 1, mass, x, &(double){0}) == AISCI_ERR_ARG, "spring_mode bad k is an argument error");
  CHECK(aisci_pimd_spring_mode(p, 0, 1, NULL, x, &(double){0}) == AISCI_ERR_ARG, "spring_mode NULL masses is an argument error");
  CHECK(aisci_pimd_spring_mode(p, 0, 1, mass, x, NULL) == AISCI_ERR_ARG, "spring_mode NULL output is an argument error");
  CHECK(aisci_pimd_spring_bead(p, 2, 1, mass, x, NULL, &(double){0}) == AISCI_ERR_ARG, "spring_bead bad j is an argument error");
  CHECK(aisci_pimd_spring_bead(NULL, 0, 1, mass, x, NULL, &(double){0}) == AISCI_ERR_ARG, "spring_bead NULL is an argument error");
  CHECK(aisci_pimd_spring_bead(p, 0, 1, mass, x, NULL, NULL) == AISCI_ERR_ARG, "spring_bead NULL output is an argument error");
  aisci_pimd_destroy(p);
}

/* aisci_pimd_modes_reproduce (@since 0.4): modes built from the beads reproduce every
 * bead; a coordinate moved by more than the tolerance does not; agrees with to_bead. */
static void test_modes_reproduce(int P)
{
  enum { N = 5 };
  aisci_pimd *p = make(P, 1.0, 1.0, 1.0);
  if (!p) return;
  const size_t m = 3 * N;
  double *beads = malloc(sizeof(double) * m * P), *modes = malloc(sizeof(double) * m * P);
  double x[3 * N];
  for (size_t i = 0; i < m * P; i++) beads[i] = 10.0 * aisci_test_srand1();
  for (int k = 0; k < P; k++) aisci_pimd_to_mode(p, k, N, beads, modes + k * m);
  for (int j = 0; j < P; j++) {
    int agree = -1;
    CHECK(aisci_pimd_modes_reproduce(p, j, N, modes, beads + j * m, 1e-12, &agree) == AISCI_OK &&
              agree == 1,
          "P=%d bead %d reproduced (%d): %s", P, j, agree, aisci_last_error());
    /* the reference is to_bead itself: it agrees at tolerance 0 */
    CHECK(aisci_pimd_to_bead(p, j, N, modes, x) == AISCI_OK, "to_bead");
    CHECK(aisci_pimd_modes_reproduce(p, j, N, modes, x, 0.0, &agree) == AISCI_OK && agree == 1,
          "P=%d bead %d: exact at rtol 0", P, j);
    x[3 * N - 1] += 1e-6 * (1.0 + fabs(x[3 * N - 1]));
    CHECK(aisci_pimd_modes_reproduce(p, j, N, modes, x, 1e-9, &agree) == AISCI_OK && agree == 0,
          "P=%d bead %d: last coordinate moved", P, j);
    CHECK(aisci_pimd_modes_reproduce(p, j, N, modes, x, 1e-5, &agree) == AISCI_OK && agree == 1,
          "P=%d bead %d: within a loose tolerance", P, j);
  }
  int agree;
  CHECK(aisci_pimd_modes_reproduce(p, P, N, modes, x, 1e-9, &agree) == AISCI_ERR_ARG, "j = P");
  CHECK(aisci_pimd_modes_reproduce(p, 0, N, NULL, x, 1e-9, &agree) == AISCI_ERR_ARG,
        "NULL modes");
  CHECK(aisci_pimd_modes_reproduce(p, 0, N, modes, x, -1.0, &agree) == AISCI_ERR_ARG,
        "negative rtol");
  CHECK(aisci_pimd_modes_reproduce(p, 0, N, modes, x, 1e-9, NULL) == AISCI_ERR_ARG, "NULL agree");
  free(beads);
  free(modes);
  aisci_pimd_destroy(p);
}

int main(void)
{
  aisci_test_rng_state = 0x1234567887654321ull;
  for (int t = 0; t < NPLIST; t++) {
    test_matrix(PLIST[t]);
    test_transforms(PLIST[t]);
    test_springs(PLIST[t]);
  }
  test_matrix(64);
  test_spring_bead_units();
  test_modes_reproduce(1);
  test_modes_reproduce(4);
  test_modes_reproduce(7);
  test_errors();
  return aisci_test_summary("test_pimd_modes");
}
