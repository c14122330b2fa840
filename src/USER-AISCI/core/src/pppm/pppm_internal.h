/* Private interface of the PPPM files (not installed):
 *   pppm.c         configuration, create (communicators, FFT layout and plans), destroy,
 *                  box changes, the whole step (compute), self energy, real-space pair;
 *   pppm_spread.c  charge assignment (spread) and field interpolation onto the atoms;
 *   pppm_solve.c   the Poisson solve: charge patches to the slab owners, FFTs, influence
 *                  function, energy and virial, field patches back;
 *   pppm_node.c    the node layout: hand-off of the patches to the node's solver and back;
 *   pppm_green.c   B-splines, the influence function, the error estimate, the grid choice. */
#ifndef AISCI_PPPM_INTERNAL_H
#define AISCI_PPPM_INTERNAL_H

#include <fftw3-mpi.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "aisci/pppm.h"
#include "internal.h"

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
static inline int pppm_signed_index(int j, int n)
{
  return j <= n / 2 ? j : j - n;
}

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
                              double g_eff, double accuracy, double q2sum, double natoms,
                              MPI_Comm comm, int n[3], double *qsum);

/* Weights of the order-P cardinal B-spline for grid coordinate u: w[k] belongs to grid
 * point first + k (k = 0..P-1); dw (if not NULL) their derivatives d w[k] / du.
 * Returns first (not wrapped). */
int pppm_bspline(double u, int order, double *w, double *dw);

/* Inverse and |det| of a 3x3 cell (rows = vectors); AISCI_ERR_ARG if singular. */
aisci_status pppm_invert_box(const double box[3][3], double hinv[3][3], double *volume);

/* ---- the object and what its files share ---- */

/* Where the object is in the step: spread, then solve, then interpolate. */
enum { PPPM_IDLE = 0, PPPM_SPREAD = 1, PPPM_SOLVED = 2 };

/* The object of aisci/pppm.h, shared by the pppm*.c files. */
struct aisci_pppm {
  MPI_Comm comm_atoms; /* spread/interpolate exchanges */
  MPI_Comm comm_fft;   /* FFTW plans and the energy reduction inside solve */
  int rank, nprocs, thread_level;

  int order, n[3], nh; /* nh = n[0]/2 + 1 complex points along a */
  double qqrd2e, accuracy, g_ewald, beta, g_eff, cutoff, q2sum, natoms;
  double box[3][3], hinv[3][3], volume;
  double kspace_error, real_error;

  /* FFT layout */
  ptrdiff_t local_nc, local_c0, local_nb, local_b0, alloc_local;
  int *c_start, *c_count; /* slab of every rank */
  int *owner;             /* owner[c] = rank owning plane c */
  double *rho;            /* real slab, local_nc x n1 x 2 nh */
  double *field[3];       /* E_x, E_y, E_z on the real slab (unnormalised) */
  fftw_complex *rho_k, *work_k;
  fftw_plan plan_fwd, plan_bwd;
  double *green; /* local_nb x n2 x nh */

  /* per-step atom data kept from spread to interpolate */
  int natoms_local;
  int64_t base_cap, w_cap; /* elements of base and w */
  int *base;               /* n x 3 first grid point (wrapped) */
  /* per atom wstride doubles: 3 x order weights [, 3 x order derivatives, 3 grid
   * coordinates (ad only)] */
  double *w;
  int wstride;
  int ad;    /* ad differentiation (else ik) */
  int ncomp; /* field components on the mesh: 3 (ik: E) or 1 (ad: potential) */
  double sf_local[18], sf_coef[18]; /* ad self-force: local k sums; global coefficients */
  /* touched planes */
  int *slot_of_plane; /* n2, -1 if untouched */
  int *plane_of_slot;
  int nslots;
  int64_t slot_cap;
  double *planes; /* nslots x plane (charges), later nslots x 3 x plane (fields) */
  int64_t planes_cap;
  int *scount, *sdispl, *rcount, *rdispl; /* in planes, per rank */
  int *scnt_d, *sdsp_d, *rcnt_d, *rdsp_d; /* the same in doubles (one field component) */
  /* Rectangle of (a, b) grid points this rank's atoms touch, as first index and length
   * along a and b (periodic: first + length may pass n); rect_all for every rank */
  int rect[4];
  int *rect_all;
  unsigned char *touched_a, *touched_b;
  int nrecv;
  int64_t recv_cap;
  int *recv_plane;
  double *recvbuf;
  int64_t recvbuf_cap;

  int state;
  double energy, virial[6];

  /* node layout (layout == AISCI_PPPM_LAYOUT_NODE) */
  int layout, solver, nnodes; /* solver: this rank runs the grid work */
  MPI_Comm comm_node;         /* the ranks of this node (ERRORS_RETURN), rank 0 = solver */
  int node_rank, node_size;
  /* solver: headers of the node's ranks, node_size x (5 + n2) ints (rect, nslots, planes) */
  int *node_hdr;
  double *node_data; /* their charge (later field) patches, concatenated */
  int64_t node_data_cap;
  size_t *node_off;              /* offset of each rank's patch in node_data (node_size + 1) */
  int node_rect[4], node_nslots; /* the node patch: covering rectangle and planes */
  int *node_plane_of_slot, *node_slot_of_plane;
  double *node_planes;
  int64_t node_planes_cap;
  double *drain;         /* solver: one chunk, to drain messages it has no room for */
  MPI_Request *node_req; /* solver: 2 per node rank (reply, field) */
  double node_reply[26];
  /* other ranks: the hand-off in flight */
  int handed;
  int *hdr_out;     /* 5 + n2 ints */
  MPI_Request *req; /* header, reply, field, then one per charge chunk */
  int64_t req_cap;
  int nreq;
  double reply[26]; /* status, energy, virial[6], sf_coef[18] */
};

/* Charge patches travel in messages of at most this many doubles (1 MiB), so that a
 * solver without memory for a patch can still receive (and drop) every message of the
 * step into its fixed drain buffer: a receive into a shorter buffer is not a way out,
 * Open MPI's single-copy shared-memory path writes past it. */
#define PPPM_CHUNK ((size_t) 1 << 17)
static inline int pppm_nchunks(size_t n)
{
  return (int) ((n + PPPM_CHUNK - 1) / PPPM_CHUNK);
}

enum { PPPM_TAG_HDR = 701, PPPM_TAG_CHARGE = 702, PPPM_TAG_REPLY = 703, PPPM_TAG_FIELD = 704 };
#define PPPM_HDR_INTS(p) (5 + (p)->n[2])

static inline int pppm_wrap(int i, int n)
{
  i %= n;
  return i < 0 ? i + n : i;
}

/* One patch of planes: its rectangle in (a, b) (first, length along a; first, length
 * along b), its planes in increasing c and their data, slot-major ([slot][b][a] charges;
 * [slot][component][b][a] fields). */
typedef struct pppm_patch {
  const int *rect;
  int nslots;
  const int *plane_of_slot;
  double *planes;
} pppm_patch;

/* dst[(first + a) mod n] += src[a] (or =), a < len, first in [0, n): two contiguous runs
 * instead of a modulo per point (the modulo cost ~20% of the solve at 160^3) */
static inline void pppm_add_run(double *dst, int first, int len, int n, const double *src)
{
  int l1 = len < n - first ? len : n - first;
  for (int a = 0; a < l1; a++) dst[first + a] += src[a];
  for (int a = l1; a < len; a++) dst[a - l1] += src[a];
}

static inline void pppm_copy_run(double *dst, const double *src, int first, int len, int n)
{
  int l1 = len < n - first ? len : n - first;
  memcpy(dst, src + first, sizeof(double) * (size_t) l1);
  if (len > l1) memcpy(dst + l1, src, sizeof(double) * (size_t) (len - l1));
}

/* Shortest periodic interval covering the marked indices of touched[0..n-1]: the
 * complement of the longest circular run of unmarked ones. first/len; len 0 if none. */
void pppm_cover_arc(const unsigned char *touched, int n, int *first, int *len);

/* Influence function on this rank's k-space block (no communication); with qlocal, the
 * sum of Q(k) over the block too (pppm.c). */
aisci_status pppm_build_green(aisci_pppm *p, double *qlocal);

/* Node layout, solver (pppm_node.c): take the node's charge patches into the node patch;
 * give the field patches (and the reply) back. */
aisci_status pppm_node_gather(aisci_pppm *p);
aisci_status pppm_node_scatter(aisci_pppm *p, aisci_status st);

#endif
