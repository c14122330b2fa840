/* Internal declarations shared by pppm.c and pppm_green.c (not installed). */
#ifndef AISCI_PPPM_INTERNAL_H
#define AISCI_PPPM_INTERNAL_H

#include <mpi.h>

#include "aisci/pppm.h"

#define AISCI_PPPM_MAX_ORDER 7

/* Tables for the optimal influence function on one grid and cell:
 * usq[d][j * nalias + (M + nb)] = sinc^(2P)(pi (m_j + n_d M) / n_d) for the signed wave
 * number m_j of index j and alias M in [-nb, nb]; sden[d][j] = the same summed over
 * (many more) aliases, snz[d][j] that sum without M = 0 (summed on its own, so that the
 * error functional needs no difference of nearly equal numbers); shift[d] = 2 pi n_d (column d of H^-1), the Cartesian k shift of
 * one alias along d. */
typedef struct pppm_kernel {
  int n[3];
  int order;
  int nb;
  double hinv[3][3];
  double g_eff;
  double *usq[3];
  double *sden[3];
  double *snz[3];
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

/* Sum of Q(k) over the whole Brillouin zone (all ranks of comm share the work). */
aisci_status pppm_q_total(const pppm_kernel *kn, MPI_Comm comm, double *qsum);

/* Relative RMS k-space force error from the Q sum: q2sum sqrt(Q / N) / V. */
double pppm_kspace_error(double qsum, double q2sum, double natoms, double volume);

/* Smallest n >= x whose only prime factors are 2, 3 and 5. */
int pppm_nice_size(int x);

/* Choose the grid that reaches accuracy (collective over comm). */
aisci_status pppm_choose_grid(const double hinv[3][3], double volume, int order, double g_eff,
                              double accuracy, double q2sum, double natoms, MPI_Comm comm,
                              int n[3], double *qsum);

/* Weights of the order-P cardinal B-spline for grid coordinate u: w[k] belongs to grid
 * point first + k (k = 0..P-1); returns first (not wrapped). */
int pppm_bspline(double u, int order, double *w);

/* Inverse and |det| of a 3x3 cell (rows = vectors); AISCI_ERR_ARG if singular. */
aisci_status pppm_invert_box(const double box[3][3], double hinv[3][3], double *volume);

#endif
