/* Direct Ewald sums for the PPPM tests (header-only, static): reciprocal-space energy,
 * forces and virial with the kernel exp(-k^2 / 4 g^2), real-space sums with the kernel
 * [erfc(g r) - erfc(beta r)] / r (beta = 0: erfc(g r) / r), and helpers for random
 * charge sets. Written for clarity, converged to ~1e-15 relative: every k with
 * exp(-k^2/4g^2) > 1e-19 and every image with erfc(g r) > 1e-17 is summed. */
#ifndef AISCI_PPPM_EWALD_REF_H
#define AISCI_PPPM_EWALD_REF_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static void ref_invert(const double h[3][3], double hinv[3][3], double *vol)
{
  double det = h[0][0] * (h[1][1] * h[2][2] - h[1][2] * h[2][1]) -
               h[0][1] * (h[1][0] * h[2][2] - h[1][2] * h[2][0]) +
               h[0][2] * (h[1][0] * h[2][1] - h[1][1] * h[2][0]);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      /* cofactor of h[j][i] divided by det */
      int r0 = (j + 1) % 3, r1 = (j + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
      hinv[i][j] = (h[r0][c0] * h[r1][c1] - h[r0][c1] * h[r1][c0]) / det;
    }
  *vol = fabs(det);
}

/* Reciprocal part: energy (qqrd2e/(2V)) sum_{k!=0} 4 pi exp(-k^2/4g^2)/k^2 |S(k)|^2,
 * forces (added), virial [xx yy zz xy xz yz]. */
static void ref_ewald_recip(int n, const double *x, const double *q, const double h[3][3],
                            double g, double qqrd2e, double *energy, double *f, double vir[6])
{
  double hinv[3][3], vol;
  ref_invert(h, hinv, &vol);
  double kmax = 2.0 * g * sqrt(44.0);
  int mmax[3];
  for (int d = 0; d < 3; d++) {
    double len = sqrt(h[d][0] * h[d][0] + h[d][1] * h[d][1] + h[d][2] * h[d][2]);
    mmax[d] = (int) ceil(kmax * len / (2.0 * M_PI));
  }
  double *cs = malloc(sizeof(double) * 2 * n);
  double e = 0.0, w[6] = {0, 0, 0, 0, 0, 0};
  for (int m0 = 0; m0 <= mmax[0]; m0++)
    for (int m1 = -mmax[1]; m1 <= mmax[1]; m1++)
      for (int m2 = -mmax[2]; m2 <= mmax[2]; m2++) {
        /* half space: m0 > 0, or m0 == 0 and (m1 > 0 or m1 == 0 and m2 > 0) */
        if (m0 == 0 && (m1 < 0 || (m1 == 0 && m2 <= 0))) continue;
        double k[3];
        for (int a = 0; a < 3; a++)
          k[a] = 2.0 * M_PI * (hinv[a][0] * m0 + hinv[a][1] * m1 + hinv[a][2] * m2);
        double ksq = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
        if (ksq > kmax * kmax) continue;
        double A = 4.0 * M_PI * exp(-ksq / (4.0 * g * g)) / ksq;
        double C = 0.0, S = 0.0;
        for (int i = 0; i < n; i++) {
          double ph = k[0] * x[3 * i] + k[1] * x[3 * i + 1] + k[2] * x[3 * i + 2];
          cs[2 * i] = cos(ph);
          cs[2 * i + 1] = sin(ph);
          C += q[i] * cs[2 * i];
          S += q[i] * cs[2 * i + 1];
        }
        double s2 = C * C + S * S;
        /* the pair (k, -k) counted once here: factor 2 */
        double ek = 2.0 * A * s2;
        e += ek;
        double c = 2.0 * (1.0 / ksq + 1.0 / (4.0 * g * g));
        w[0] += ek * (1.0 - c * k[0] * k[0]);
        w[1] += ek * (1.0 - c * k[1] * k[1]);
        w[2] += ek * (1.0 - c * k[2] * k[2]);
        w[3] -= ek * c * k[0] * k[1];
        w[4] -= ek * c * k[0] * k[2];
        w[5] -= ek * c * k[1] * k[2];
        if (f)
          for (int i = 0; i < n; i++) {
            double im = cs[2 * i + 1] * C - cs[2 * i] * S;
            double fi = qqrd2e / vol * 2.0 * A * q[i] * im;
            for (int a = 0; a < 3; a++) f[3 * i + a] += fi * k[a];
          }
      }
  free(cs);
  double scale = qqrd2e / (2.0 * vol);
  if (energy) *energy = scale * e;
  if (vir)
    for (int v = 0; v < 6; v++) vir[v] = scale * w[v];
}

/* Real-space part: (1/2) sum_i sum_j sum_images' q_i q_j phi(r), phi = [erfc(g r) -
 * erfc(beta r)] / r (beta = 0: no second term), forces added. */
static void ref_ewald_real(int n, const double *x, const double *q, const double h[3][3],
                           double g, double beta, double qqrd2e, double *energy, double *f)
{
  double hinv[3][3], vol;
  ref_invert(h, hinv, &vol);
  double rc = 6.3 / g;
  int nmax[3];
  for (int d = 0; d < 3; d++) {
    double width = 1.0 / sqrt(hinv[0][d] * hinv[0][d] + hinv[1][d] * hinv[1][d] +
                              hinv[2][d] * hinv[2][d]);
    nmax[d] = (int) ceil(rc / width) + 1;
  }
  double e = 0.0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int a = -nmax[0]; a <= nmax[0]; a++)
        for (int b = -nmax[1]; b <= nmax[1]; b++)
          for (int c = -nmax[2]; c <= nmax[2]; c++) {
            if (i == j && a == 0 && b == 0 && c == 0) continue;
            double d[3];
            for (int k = 0; k < 3; k++)
              d[k] = x[3 * i + k] - x[3 * j + k] + a * h[0][k] + b * h[1][k] + c * h[2][k];
            double r = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
            if (r > rc) continue;
            double phi = erfc(g * r) / r;
            double dphi = -phi / r - 2.0 / sqrt(M_PI) * g * exp(-g * g * r * r) / r;
            if (beta > 0.0) {
              double pb = erfc(beta * r) / r;
              phi -= pb;
              dphi -= -pb / r - 2.0 / sqrt(M_PI) * beta * exp(-beta * beta * r * r) / r;
            }
            e += 0.5 * q[i] * q[j] * phi;
            if (f)
              for (int k = 0; k < 3; k++) f[3 * i + k] -= qqrd2e * q[i] * q[j] * dphi * d[k] / r;
          }
  *energy = qqrd2e * e;
}

/* Simple deterministic generator (splitmix64) for test data */
static double ref_uniform(unsigned long long *state)
{
  unsigned long long z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double) (z >> 11) * (1.0 / 9007199254740992.0);
}

/* n random positions in the cell (fractional uniform, then x = s H) and charges in
 * [-1, 1]; if neutral, the mean is subtracted. */
static void ref_random_system(int n, const double h[3][3], unsigned long long seed, int neutral,
                              double *x, double *q)
{
  unsigned long long st = seed;
  double qs = 0.0;
  for (int i = 0; i < n; i++) {
    double s[3];
    for (int d = 0; d < 3; d++) s[d] = ref_uniform(&st);
    for (int a = 0; a < 3; a++) x[3 * i + a] = s[0] * h[0][a] + s[1] * h[1][a] + s[2] * h[2][a];
    q[i] = 2.0 * ref_uniform(&st) - 1.0;
    qs += q[i];
  }
  if (neutral)
    for (int i = 0; i < n; i++) q[i] -= qs / n;
}

/* RMS over atoms of |fa - fb| */
static double ref_rms_diff(int n, const double *fa, const double *fb)
{
  double s = 0.0;
  for (int i = 0; i < 3 * n; i++) s += (fa[i] - fb[i]) * (fa[i] - fb[i]);
  return sqrt(s / n);
}

#endif
