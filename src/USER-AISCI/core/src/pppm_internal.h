/* Internal declarations shared by pppm.c and pppm_green.c (not installed). */
#ifndef AISCI_PPPM_INTERNAL_H
#define AISCI_PPPM_INTERNAL_H

#include <mpi.h>

#include "aisci/pppm.h"

#define AISCI_PPPM_MAX_ORDER 7
/* exp(-x) is left out (taken as 0) beyond this x: the sums square it, and
 * exp(-345)^2 ~ 1e-300 stays above the subnormal range (slow arithmetic) */
#define AISCI_PPPM_EXP_CUT 345.0

/* Tables for the optimal influence function on one grid and cell:
 * usq[d][j * nalias + (M + nb)] = sinc^(2P)(pi (m_j + n_d M) / n_d) for the signed wave
 * number m_j of index j and alias M in [-nb, nb]; sden[d][j] = the same summed over
 * (many more) aliases, snz[d][j] that sum without M = 0 (summed on its own, so that the
 * error functional needs no difference of nearly equal numbers); shift[d] = 2 pi n_d
 * (column d of H^-1), the Cartesian k shift of one alias along d. */
typedef struct pppm_kernel {
  int n[3];
  int order;
  int nb;
  double hinv[3][3];
  double g_eff;
  double *usq[3];
  double *sden[3];
  double *snz[3];
  /* for ad differentiation: usig[d][j * nw + (M + nb + 2)] = sinc^P (signed) for
   * M in [-nb-2, nb+2], nw = 2 nb + 5; v1/v2[d][j] = sum_M M^k U^2 (k = 1, 2) */
  double *usig[3];
  double *v1[3], *v2[3];
  double shift[3][3];
} pppm_kernel;

/* Signed wave number of FFT index j on an n-point grid, and whether it is the Nyquist
 * index of an even grid. */
static inline int pppm_signed_index(int j, int n) { return j <= n / 2 ? j : j - n; }

aisci_status pppm_kernel_init(pppm_kernel *kn, const int n[3], int order, const double hinv[3][3],
                              double g_eff);
void pppm_kernel_free(pppm_kernel *kn);

/* Influence function G at FFT index j (all three indices in 0..n_d-1) and the
 * Deserno-Holm error density Q(k) of the optimal G there (either output may be NULL). */
void pppm_green_point(const pppm_kernel *kn, const int j[3], double *green, double *qk);
/* The same, and the reference force power sum_M |R(k_M)|^2 there. */
void pppm_green_point_rsq(const pppm_kernel *kn, const int j[3], double *green, double *qk,
                          double *rsq);

/* ad differentiation: optimal G and Q(k) at FFT index j, and the self-force sums
 * sf[h][d][alpha] (h = 0, 1 for the first and second harmonic along grid direction d)
 * of G(k) sum_M k_M U(k_M) U(k_{M - (h+1) e_d}), for the k and (if both_signs) -k. */
void pppm_green_point_ad(const pppm_kernel *kn, const int j[3], int both_signs, double *green,
                         double *qk, double *rsq, double sf[2][3][3]);

/* Sum of Q(k) over the whole Brillouin zone (all ranks of comm share the work);
 * ad selects the functional of ad differentiation. */
aisci_status pppm_q_total(const pppm_kernel *kn, int ad, MPI_Comm comm, double *qsum);

/* Relative RMS k-space force error from the Q sum: q2sum sqrt(Q / N) / V. */
double pppm_kspace_error(double qsum, double q2sum, double natoms, double volume);

/* Smallest n >= x whose only prime factors are 2, 3 and 5. */
int pppm_nice_size(int x);

/* Choose the grid that reaches accuracy (collective over comm). */
aisci_status pppm_choose_grid(const double hinv[3][3], double volume, int order, int ad,
                              double g_eff,
                              double accuracy, double q2sum, double natoms, MPI_Comm comm,
                              int n[3], double *qsum);

/* Weights of the order-P cardinal B-spline for grid coordinate u: w[k] belongs to grid
 * point first + k (k = 0..P-1); dw (if not NULL) their derivatives d w[k] / du.
 * Returns first (not wrapped). */
int pppm_bspline(double u, int order, double *w, double *dw);

/* Inverse and |det| of a 3x3 cell (rows = vectors); AISCI_ERR_ARG if singular. */
aisci_status pppm_invert_box(const double box[3][3], double hinv[3][3], double *volume);

#endif
