/* PPPM building blocks that do not touch the grid data: B-spline charge assignment,
 * the optimal influence function of Hockney and Eastwood (Deserno and Holm's form for
 * ik differentiation), the Deserno-Holm error functional Q and the grid choice. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pppm_internal.h"

/* Aliases summed exactly in the denominator (per dimension, cheap) */
#define PPPM_DEN_ALIASES 200

int pppm_bspline(double u, int order, double *w, double *dw)
{
  /* Points with |u - m| < P/2 carry weight; the first is floor(u - P/2) + 1 and
   * w[k] = M_P(f + P - 1 - k) with f the fractional part of u - P/2, where M_P is the
   * cardinal B-spline on [0, P]. a[j] holds M_n(f + j), built by the recursion
   * M_n(x) = [x M_{n-1}(x) + (n - x) M_{n-1}(x - 1)] / (n - 1). */
  double t = u - 0.5 * order;
  double fl = floor(t);
  double f = t - fl;
  double a[AISCI_PPPM_MAX_ORDER + 1];
  a[0] = f;
  a[1] = 1.0 - f;
  for (int n = 3; n <= order; n++) {
    if (n == order && dw) {
      /* M_P'(x) = M_{P-1}(x) - M_{P-1}(x - 1); w[k] = M_P(f + P - 1 - k) */
      for (int k = 0; k < order; k++) {
        int jj = order - 1 - k;
        dw[k] = (jj <= order - 2 ? a[jj] : 0.0) - (jj >= 1 ? a[jj - 1] : 0.0);
      }
    }
    /* in place, from the top: a[j - 1] still holds M_{n-1} when a[j] is updated */
    double inv = 1.0 / (n - 1);
    a[n - 1] = (1.0 - f) * a[n - 2] * inv;
    for (int j = n - 2; j >= 1; j--) a[j] = ((f + j) * a[j] + (n - f - j) * a[j - 1]) * inv;
    a[0] = f * a[0] * inv;
  }
  if (order == 2 && dw) {
    dw[0] = -1.0; /* w = {1 - f, f} */
    dw[1] = 1.0;
  }
  for (int k = 0; k < order; k++) w[k] = a[order - 1 - k];
  return (int) fl + 1;
}

aisci_status pppm_invert_box(const double h[3][3], double hinv[3][3], double *volume)
{
  double c00 = h[1][1] * h[2][2] - h[1][2] * h[2][1];
  double c01 = h[1][2] * h[2][0] - h[1][0] * h[2][2];
  double c02 = h[1][0] * h[2][1] - h[1][1] * h[2][0];
  double det = h[0][0] * c00 + h[0][1] * c01 + h[0][2] * c02;
  double la = sqrt(h[0][0] * h[0][0] + h[0][1] * h[0][1] + h[0][2] * h[0][2]);
  double lb = sqrt(h[1][0] * h[1][0] + h[1][1] * h[1][1] + h[1][2] * h[1][2]);
  double lc = sqrt(h[2][0] * h[2][0] + h[2][1] * h[2][1] + h[2][2] * h[2][2]);
  if (!isfinite(det) || !(fabs(det) > 1e-10 * la * lb * lc))
    return aisci_set_error(AISCI_ERR_ARG, "pppm: singular or degenerate cell (det %g)", det);
  hinv[0][0] = c00 / det;
  hinv[1][0] = c01 / det;
  hinv[2][0] = c02 / det;
  hinv[0][1] = (h[0][2] * h[2][1] - h[0][1] * h[2][2]) / det;
  hinv[1][1] = (h[0][0] * h[2][2] - h[0][2] * h[2][0]) / det;
  hinv[2][1] = (h[0][1] * h[2][0] - h[0][0] * h[2][1]) / det;
  hinv[0][2] = (h[0][1] * h[1][2] - h[0][2] * h[1][1]) / det;
  hinv[1][2] = (h[0][2] * h[1][0] - h[0][0] * h[1][2]) / det;
  hinv[2][2] = (h[0][0] * h[1][1] - h[0][1] * h[1][0]) / det;
  *volume = fabs(det);
  return AISCI_OK;
}

static double sinc(double x)
{
  return fabs(x) < 1e-12 ? 1.0 : sin(x) / x;
}

static double ipow(double x, int p)
{
  double r = 1.0;
  for (int i = 0; i < p; i++) r *= x;
  return r;
}

void pppm_kernel_free(pppm_kernel *kn)
{
  for (int d = 0; d < 3; d++) {
    free(kn->usq[d]);
    free(kn->sden[d]);
    free(kn->snz[d]);
    free(kn->usig[d]);
    free(kn->v1[d]);
    free(kn->v2[d]);
    kn->usq[d] = kn->sden[d] = kn->snz[d] = kn->usig[d] = kn->v1[d] = kn->v2[d] = NULL;
  }
}

aisci_status pppm_kernel_init(pppm_kernel *kn, const int n[3], int order, const double hinv[3][3],
                              double g_eff)
{
  memset(kn, 0, sizeof(*kn));
  kn->order = order;
  /* Alias images |M| <= nb in the numerator: the aliased weight falls like
   * (2 |M|)^(-2P) at the zone edge, so low orders need one more image. */
  kn->nb = order <= 3 ? 3 : 2;
  kn->g_eff = g_eff;
  memcpy(kn->hinv, hinv, sizeof(kn->hinv));
  int na = 2 * kn->nb + 1;
  for (int d = 0; d < 3; d++) {
    kn->n[d] = n[d];
    for (int a = 0; a < 3; a++) kn->shift[d][a] = 2.0 * AISCI_PI * n[d] * hinv[a][d];
    kn->usq[d] = malloc(sizeof(double) * (size_t) n[d] * na);
    kn->sden[d] = malloc(sizeof(double) * (size_t) n[d]);
    kn->snz[d] = malloc(sizeof(double) * (size_t) n[d]);
    kn->usig[d] = malloc(sizeof(double) * (size_t) n[d] * (na + 4));
    kn->v1[d] = malloc(sizeof(double) * (size_t) n[d]);
    kn->v2[d] = malloc(sizeof(double) * (size_t) n[d]);
    if (!kn->usq[d] || !kn->sden[d] || !kn->snz[d] || !kn->usig[d] || !kn->v1[d] || !kn->v2[d]) {
      pppm_kernel_free(kn);
      return aisci_set_error(AISCI_ERR_ALLOC, "pppm: out of memory for influence tables");
    }
    for (int j = 0; j < n[d]; j++) {
      int m = pppm_signed_index(j, n[d]);
      for (int mm = -kn->nb; mm <= kn->nb; mm++)
        kn->usq[d][j * na + mm + kn->nb] =
            ipow(sinc(AISCI_PI * (m + (double) n[d] * mm) / n[d]), 2 * order);
      /* Sum from the largest aliases down, for rounding */
      double s = 0.0;
      for (int mm = PPPM_DEN_ALIASES; mm >= 1; mm--)
        s += ipow(sinc(AISCI_PI * ((double) m / n[d] + mm)), 2 * order) +
            ipow(sinc(AISCI_PI * ((double) m / n[d] - mm)), 2 * order);
      kn->snz[d][j] = s;
      kn->sden[d][j] = s + ipow(sinc(AISCI_PI * (double) m / n[d]), 2 * order);
      for (int mm = -kn->nb - 2; mm <= kn->nb + 2; mm++)
        kn->usig[d][j * (na + 4) + mm + kn->nb + 2] =
            ipow(sinc(AISCI_PI * (m + (double) n[d] * mm) / n[d]), order);
      double s1 = 0.0, s2 = 0.0;
      for (int mm = PPPM_DEN_ALIASES; mm >= 1; mm--) {
        double up = ipow(sinc(AISCI_PI * ((double) m / n[d] + mm)), 2 * order);
        double um = ipow(sinc(AISCI_PI * ((double) m / n[d] - mm)), 2 * order);
        s1 += mm * (up - um);
        s2 += (double) mm * mm * (up + um);
      }
      kn->v1[d][j] = s1;
      kn->v2[d][j] = s2;
    }
  }
  return AISCI_OK;
}

void pppm_green_point(const pppm_kernel *kn, const int j[3], double *green, double *qk)
{
  pppm_green_point_rsq(kn, j, green, qk, NULL);
}

void pppm_green_point_rsq(const pppm_kernel *kn, const int j[3], double *green, double *qk,
                          double *rsq_out)
{
  int m[3], nyquist = 0, zero = 1;
  for (int d = 0; d < 3; d++) {
    m[d] = pppm_signed_index(j[d], kn->n[d]);
    if (kn->n[d] % 2 == 0 && j[d] == kn->n[d] / 2) nyquist = 1;
    if (m[d] != 0) zero = 0;
  }
  double k[3];
  for (int a = 0; a < 3; a++)
    k[a] = 2.0 * AISCI_PI * (kn->hinv[a][0] * m[0] + kn->hinv[a][1] * m[1] + kn->hinv[a][2] * m[2]);
  double ksq = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
  double inv4g2 = 0.25 / (kn->g_eff * kn->g_eff);
  int nb = kn->nb, na = 2 * nb + 1;
  const double *u0 = kn->usq[0] + (size_t) j[0] * na + nb;
  const double *u1 = kn->usq[1] + (size_t) j[1] * na + nb;
  const double *u2 = kn->usq[2] + (size_t) j[2] * na + nb;
  /* Per alias M: U2 = U^2(k_M), r = R(k_M) = 4 pi exp(-k_M^2/4g^2) / k_M^2,
   * t = |R(k_M) k_M| (reference force), s = (k^ . k_M) r (its part along k).
   * x = sum_{M != 0} U2 s, tsq = sum_{M != 0} t^2; the M = 0 terms are kept apart. */
  double x = 0.0, tsq = 0.0, t0 = 0.0;
  double kabs = sqrt(ksq);
  for (int mz = -nb; mz <= nb; mz++) {
    for (int my = -nb; my <= nb; my++) {
      double kyz[3];
      for (int a = 0; a < 3; a++) kyz[a] = k[a] + my * kn->shift[1][a] + mz * kn->shift[2][a];
      double uyz = u1[my] * u2[mz];
      for (int mx = -nb; mx <= nb; mx++) {
        double km[3];
        for (int a = 0; a < 3; a++) km[a] = kyz[a] + mx * kn->shift[0][a];
        double kmsq = km[0] * km[0] + km[1] * km[1] + km[2] * km[2];
        if (kmsq == 0.0) continue;
        /* beyond AISCI_PPPM_EXP_CUT the term is far below any sum it joins; exp() and
         * squares of such arguments give subnormals, whose arithmetic is ~100x slower
         * (the influence function of a 160^3 mesh took 10 s instead of 3.5 s) */
        const double arg = kmsq * inv4g2;
        if (arg > AISCI_PPPM_EXP_CUT) continue;
        double r = 4.0 * AISCI_PI * exp(-arg) / kmsq;
        double tt = r * r * kmsq;
        if (mx == 0 && my == 0 && mz == 0) {
          t0 = sqrt(tt);
          continue;
        }
        tsq += tt;
        if (!zero) x += uyz * u0[mx] * (k[0] * km[0] + k[1] * km[1] + k[2] * km[2]) / kabs * r;
      }
    }
  }
  if (rsq_out) *rsq_out = tsq + t0 * t0;
  if (zero || nyquist) {
    /* k = 0 is excluded (neutralising background); Nyquist modes have no consistent
     * ik derivative on a real grid, so they are left out of energy and forces alike. */
    if (green) *green = 0.0;
    if (qk) *qk = tsq + t0 * t0;
    return;
  }
  /* A = sum_M U^2 (all aliases, per dimension), B = A - U^2(k) from the M != 0 sums */
  const double a0 = kn->sden[0][j[0]], a1 = kn->sden[1][j[1]], a2 = kn->sden[2][j[2]];
  const double b0 = kn->snz[0][j[0]], b1 = kn->snz[1][j[1]], b2 = kn->snz[2][j[2]];
  const double c0 = u0[0], c1 = u1[0], c2 = u2[0]; /* U^2(k) per dimension */
  const double A = a0 * a1 * a2, uk = c0 * c1 * c2;
  const double B = b0 * a1 * a2 + c0 * b1 * a2 + c0 * c1 * b2;
  /* G = (k . sum_M U2 R k_M) / (k^2 A^2) = (uk t0 + x) / (|k| A^2) */
  double g = (uk * t0 + x) / (kabs * A * A);
  if (green) *green = g;
  if (qk) {
    /* Q(k) = sum_M t^2 - (uk t0 + x)^2 / A^2, rearranged without cancellation:
     * t0^2 (1 - uk^2/A^2) = t0^2 (B/A)(1 + uk/A) with B = A - uk */
    double q = t0 * t0 * (B / A) * (1.0 + uk / A) - (2.0 * uk * t0 * x + x * x) / (A * A) + tsq;
    *qk = q;
  }
}

void pppm_green_point_ad(const pppm_kernel *kn, const int j[3], int both_signs, double *green,
                         double *qk, double *rsq_out, double sf[2][3][3])
{
  /* ad: the force is minus the gradient of the interpolated mesh potential, so the
   * differentiation operator acts on each alias: D(k_M) = -i k_M, and Hockney and
   * Eastwood's optimal G becomes
   *   G = sum_M U^2(k_M) 4 pi f(k_M) / ( [sum_M U^2(k_M)] [sum_M k_M^2 U^2(k_M)] ),
   * f = exp(-k^2/4g^2); the error functional
   *   Q(k) = sum_M |R(k_M)|^2 - (sum_M U^2 4 pi f)^2 / (A K),
   * with A = sum_M U^2 and K = sum_M k_M^2 U^2 taken over many aliases (separable). */
  int m[3], zero = 1;
  for (int d = 0; d < 3; d++) {
    m[d] = pppm_signed_index(j[d], kn->n[d]);
    if (m[d] != 0) zero = 0;
  }
  double k[3];
  for (int a = 0; a < 3; a++)
    k[a] = 2.0 * AISCI_PI * (kn->hinv[a][0] * m[0] + kn->hinv[a][1] * m[1] + kn->hinv[a][2] * m[2]);
  double ksq = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
  double inv4g2 = 0.25 / (kn->g_eff * kn->g_eff);
  int nb = kn->nb, na = 2 * nb + 1, nw = na + 4;
  const double *u0 = kn->usq[0] + (size_t) j[0] * na + nb;
  const double *u1 = kn->usq[1] + (size_t) j[1] * na + nb;
  const double *u2 = kn->usq[2] + (size_t) j[2] * na + nb;
  const double *s0 = kn->usig[0] + (size_t) j[0] * nw + nb + 2;
  const double *s1 = kn->usig[1] + (size_t) j[1] * nw + nb + 2;
  const double *s2 = kn->usig[2] + (size_t) j[2] * nw + nb + 2;
  double y = 0.0, tsq = 0.0, f0 = 0.0;
  double self[2][3][3];
  memset(self, 0, sizeof(self));
  for (int mz = -nb; mz <= nb; mz++) {
    for (int my = -nb; my <= nb; my++) {
      double kyz[3];
      for (int a = 0; a < 3; a++) kyz[a] = k[a] + my * kn->shift[1][a] + mz * kn->shift[2][a];
      double uyz = u1[my] * u2[mz];
      for (int mx = -nb; mx <= nb; mx++) {
        double km[3];
        for (int a = 0; a < 3; a++) km[a] = kyz[a] + mx * kn->shift[0][a];
        double kmsq = km[0] * km[0] + km[1] * km[1] + km[2] * km[2];
        if (kmsq == 0.0) continue;
        const double arg = kmsq * inv4g2; /* no subnormal exp(): see pppm_green_point_rsq */
        double fm = arg > AISCI_PPPM_EXP_CUT ? 0.0 : 4.0 * AISCI_PI * exp(-arg);
        if (sf) {
          /* U(k_M) [U(k_{M - h e_d}) - U(k_{M + h e_d}) (the -k partner)] */
          double um = s0[mx] * s1[my] * s2[mz];
          for (int h = 0; h < 2; h++) {
            int dh = h + 1;
            double lo[3] = {s0[mx - dh] * s1[my] * s2[mz], s0[mx] * s1[my - dh] * s2[mz],
                            s0[mx] * s1[my] * s2[mz - dh]};
            double hi[3] = {s0[mx + dh] * s1[my] * s2[mz], s0[mx] * s1[my + dh] * s2[mz],
                            s0[mx] * s1[my] * s2[mz + dh]};
            for (int d = 0; d < 3; d++) {
              double c = um * (lo[d] - (both_signs ? hi[d] : 0.0));
              for (int a = 0; a < 3; a++) self[h][d][a] += c * km[a];
            }
          }
        }
        if (mx == 0 && my == 0 && mz == 0) {
          f0 = fm;
          continue;
        }
        tsq += fm * fm / kmsq;
        if (!zero) y += uyz * u0[mx] * fm;
      }
    }
  }
  double t0sq = zero ? 0.0 : f0 * f0 / ksq;
  if (rsq_out) *rsq_out = tsq + t0sq;
  if (zero) {
    if (green) *green = 0.0;
    if (qk) *qk = tsq;
    if (sf) memset(sf, 0, sizeof(double) * 18);
    return;
  }
  const double a0 = kn->sden[0][j[0]], a1 = kn->sden[1][j[1]], a2 = kn->sden[2][j[2]];
  const double b0 = kn->snz[0][j[0]], b1 = kn->snz[1][j[1]], b2 = kn->snz[2][j[2]];
  const double c0 = u0[0], c1 = u1[0], c2 = u2[0];
  const double A = a0 * a1 * a2, uk = c0 * c1 * c2;
  const double B = b0 * a1 * a2 + c0 * b1 * a2 + c0 * c1 * b2;
  /* K' = K - uk k^2 = k^2 B + 2 k . Y + Z with Y = sum_M U^2 delta_M, Z = sum_M U^2 |delta_M|^2,
   * delta_M = sum_d M_d shift_d: separable sums, no cancellation against uk k^2 */
  const double av[3] = {a0, a1, a2};
  const double *v1[3] = {kn->v1[0] + j[0], kn->v1[1] + j[1], kn->v1[2] + j[2]};
  const double *v2[3] = {kn->v2[0] + j[0], kn->v2[1] + j[1], kn->v2[2] + j[2]};
  double Y[3] = {0, 0, 0}, Z = 0.0;
  for (int d = 0; d < 3; d++) {
    double others = av[(d + 1) % 3] * av[(d + 2) % 3];
    for (int a = 0; a < 3; a++) Y[a] += kn->shift[d][a] * v1[d][0] * others;
    double sh2 = kn->shift[d][0] * kn->shift[d][0] + kn->shift[d][1] * kn->shift[d][1] +
        kn->shift[d][2] * kn->shift[d][2];
    Z += sh2 * v2[d][0] * others;
    for (int e = 0; e < 3; e++) {
      if (e == d) continue;
      int third = 3 - d - e;
      double dot = kn->shift[d][0] * kn->shift[e][0] + kn->shift[d][1] * kn->shift[e][1] +
          kn->shift[d][2] * kn->shift[e][2];
      Z += dot * v1[d][0] * v1[e][0] * av[third];
    }
  }
  double Kp = ksq * B + 2.0 * (k[0] * Y[0] + k[1] * Y[1] + k[2] * Y[2]) + Z;
  double K = uk * ksq + Kp;
  double g = (uk * f0 + y) / (A * K);
  if (green) *green = g;
  if (qk)
    *qk = f0 * f0 * (uk * Kp + B * uk * ksq + B * Kp) / (ksq * A * K) -
        (2.0 * uk * f0 * y + y * y) / (A * K) + tsq;
  if (sf)
    for (int h = 0; h < 2; h++)
      for (int d = 0; d < 3; d++)
        for (int a = 0; a < 3; a++) sf[h][d][a] = g * self[h][d][a];
}

aisci_status pppm_q_total(const pppm_kernel *kn, int ad, MPI_Comm comm, double *qsum)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  /* Half spectrum along a (Q(-k) = Q(k)); planes along c shared out in blocks */
  int nh = kn->n[0] / 2 + 1;
  int nc = kn->n[2];
  int c0 = (int) ((long) nc * rank / size), c1 = (int) ((long) nc * (rank + 1) / size);
  double local[2] = {0.0, 0.0}, total[2];
  for (int jc = c0; jc < c1; jc++)
    for (int jb = 0; jb < kn->n[1]; jb++)
      for (int ja = 0; ja < nh; ja++) {
        int j[3] = {ja, jb, jc};
        double weight = (ja == 0 || (kn->n[0] % 2 == 0 && ja == kn->n[0] / 2)) ? 1.0 : 2.0;
        double q, rsq;
        if (ad)
          pppm_green_point_ad(kn, j, 0, NULL, &q, &rsq, NULL);
        else
          pppm_green_point_rsq(kn, j, NULL, &q, &rsq);
        local[0] += weight * q;
        local[1] += weight * rsq;
      }
  if (MPI_Allreduce(local, total, 2, MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS)
    return aisci_set_error(AISCI_ERR_MPI, "pppm: MPI_Allreduce failed in the error estimate");
  /* Q is evaluated without differences of nearly equal numbers, but its terms are
   * still rounded at ~1e-16 of the force power: never claim less than 1e-18 of it. */
  *qsum = fmax(total[0], 1e-18 * total[1]);
  return AISCI_OK;
}

double pppm_kspace_error(double qsum, double q2sum, double natoms, double volume)
{
  /* Deserno-Holm: for N random charges the RMS force error is
   * sum(q^2) sqrt(Q / (N V)) with Q = (1/V) sum_k Q(k). */
  if (!(q2sum > 0.0) || !(natoms > 0.0)) return -1.0;
  return q2sum * sqrt(fmax(qsum, 0.0) / natoms) / volume;
}

int pppm_nice_size(int x)
{
  if (x < 1) x = 1;
  for (int n = x;; n++) {
    int r = n;
    while (r % 2 == 0) r /= 2;
    while (r % 3 == 0) r /= 3;
    while (r % 5 == 0) r /= 5;
    if (r == 1) return n;
  }
}

#define PPPM_MAX_GRID 4096
#define PPPM_MAX_AUTO_POINTS (1L << 24)

/* Grid sizes for spacing h (length): n_d = nice(width_d / h), at least order. 0 if too big. */
static int grid_for(const double width[3], double h, int order, int n[3])
{
  long total = 1;
  for (int d = 0; d < 3; d++) {
    double want = ceil(width[d] / h - 1e-9);
    if (want > PPPM_MAX_GRID) return 0;
    n[d] = pppm_nice_size((int) want < order ? order : (int) want);
    total *= n[d];
  }
  return total <= PPPM_MAX_AUTO_POINTS;
}

aisci_status pppm_choose_grid(const double hinv[3][3], double volume, int order, int ad,
                              double g_eff, double accuracy, double q2sum, double natoms,
                              MPI_Comm comm, int n[3], double *qsum)
{
  /* Interplanar spacing of each family of lattice planes: grid spacing h along
   * direction d needs n_d = width_d / h points. */
  double width[3];
  for (int d = 0; d < 3; d++)
    width[d] =
        1.0 / sqrt(hinv[0][d] * hinv[0][d] + hinv[1][d] * hinv[1][d] + hinv[2][d] * hinv[2][d]);
  /* Start coarse (h g = 2) and refine with the asymptotic law error ~ h^P; a grid that
   * the law says is out of reach fails before it is evaluated. */
  double h = 2.0 / g_eff;
  int prev[3] = {0, 0, 0};
  for (int iter = 0; iter < 60; iter++) {
    if (!grid_for(width, h, order, n)) break;
    if (n[0] == prev[0] && n[1] == prev[1] && n[2] == prev[2]) {
      h *= 0.97;
      continue;
    }
    memcpy(prev, n, sizeof(prev));
    pppm_kernel kn;
    aisci_status st = pppm_kernel_init(&kn, n, order, hinv, g_eff);
    if (st != AISCI_OK) return st;
    st = pppm_q_total(&kn, ad, comm, qsum);
    pppm_kernel_free(&kn);
    if (st != AISCI_OK) return st;
    double err = pppm_kspace_error(*qsum, q2sum, natoms, volume);
    if (err <= accuracy) return AISCI_OK;
    double factor = pow(accuracy / err, 1.0 / order);
    int probe[3];
    if (!grid_for(width, h * factor, order, probe)) break;
    factor *= 0.98;
    if (factor > 0.97) factor = 0.97;
    if (factor < 0.5) factor = 0.5;
    h *= factor;
  }
  return aisci_set_error(AISCI_ERR_ARG,
                         "pppm: accuracy %g needs a grid beyond %d points per direction or "
                         "%ld in all; relax the accuracy, raise g_ewald or give the grid",
                         accuracy, PPPM_MAX_GRID, PPPM_MAX_AUTO_POINTS);
}
