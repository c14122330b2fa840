/* PPPM (P3M) reciprocal-space electrostatics on FFTW's MPI interface.
 *
 * Grid: n[0] x n[1] x n[2] points along the cell vectors a, b, c; point (i0, i1, i2) sits
 * at fractional coordinates (i0/n0, i1/n1, i2/n2). FFTW sees the real grid as the
 * row-major array [n2][n1][n0] (padded to 2 (n0/2 + 1) along a), cut into slabs of
 * planes along c. The forward r2c transform leaves k-space transposed,
 * [local b][c][a half], which is where the influence function is stored.
 *
 * Steps: spread (B-spline charge assignment into the part of the grid this rank's atoms
 * touch: a set of planes along c, each cut to one periodic rectangle in (a, b); then a
 * sum onto the planes' owners), solve (forward FFT, G, energy/virial, three inverse
 * FFTs of -i k_d G rho), interpolate (owners send the field rectangles back, B-spline
 * interpolation of q E).
 *
 * Layouts: in the rank layout every rank owns a slab and solves. In the node layout only
 * node-local rank 0 of each node (the solver) owns a slab: the node's other ranks send it
 * their charge patches (one header message: rect, plane count and plane list; the data
 * in chunks of at most 1 MiB), it sums them into one node patch (the covering arcs of
 * their rectangles and the union of their planes), the solvers exchange and transform
 * node patches exactly as ranks do in the rank layout, and the solver cuts the field of
 * the node patch back into the ranks' patches (one reply: status, energy, virial, ad
 * self-force coefficients; one data message). */
#include <fftw3-mpi.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pppm_internal.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

enum { PPPM_IDLE = 0, PPPM_SPREAD = 1, PPPM_SOLVED = 2 };

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
  int natoms_local, atom_cap;
  int *base;  /* n x 3 first grid point (wrapped) */
  double *w;  /* per atom wstride doubles: 3 x order weights [, 3 x order derivatives, 3
                 grid coordinates (ad only)] */
  int wstride;
  int ad;     /* ad differentiation (else ik) */
  int ncomp;  /* field components on the mesh: 3 (ik: E) or 1 (ad: potential) */
  double sf_local[18], sf_coef[18]; /* ad self-force: local k sums; global coefficients */
  /* touched planes */
  int *slot_of_plane; /* n2, -1 if untouched */
  int *plane_of_slot;
  int nslots, slot_cap;
  double *planes; /* nslots x plane (charges), later nslots x 3 x plane (fields) */
  size_t planes_cap;
  int *scount, *sdispl, *rcount, *rdispl; /* in planes, per rank */
  int *scnt_d, *sdsp_d, *rcnt_d, *rdsp_d;  /* the same in doubles (one field component) */
  /* Rectangle of (a, b) grid points this rank's atoms touch, as first index and length
   * along a and b (periodic: first + length may pass n); rect_all for every rank */
  int rect[4];
  int *rect_all;
  unsigned char *touched_a, *touched_b;
  int nrecv, recv_cap;
  int *recv_plane;
  double *recvbuf;
  size_t recvbuf_cap;

  int state;
  double energy, virial[6];

  /* node layout (layout == AISCI_PPPM_LAYOUT_NODE) */
  int layout, solver, nnodes;  /* solver: this rank runs the grid work */
  MPI_Comm comm_node;          /* the ranks of this node (ERRORS_RETURN), rank 0 = solver */
  int node_rank, node_size;
  /* solver: headers of the node's ranks, node_size x (5 + n2) ints (rect, nslots, planes) */
  int *node_hdr;
  double *node_data;           /* their charge (later field) patches, concatenated */
  size_t node_data_cap;
  size_t *node_off;            /* offset of each rank's patch in node_data (node_size + 1) */
  int node_rect[4], node_nslots;  /* the node patch: covering rectangle and planes */
  int *node_plane_of_slot, *node_slot_of_plane;
  double *node_planes;
  size_t node_planes_cap;
  double *drain;               /* solver: one chunk, to drain messages it has no room for */
  MPI_Request *node_req;       /* solver: 2 per node rank (reply, field) */
  double node_reply[26];
  /* other ranks: the hand-off in flight */
  int handed;
  int *hdr_out;                /* 5 + n2 ints */
  MPI_Request *req;            /* header, reply, field, then one per charge chunk */
  int req_cap, nreq;
  double reply[26];            /* status, energy, virial[6], sf_coef[18] */
};

/* Charge patches travel in messages of at most this many doubles (1 MiB), so that a
 * solver without memory for a patch can still receive (and drop) every message of the
 * step into its fixed drain buffer: a receive into a shorter buffer is not a way out,
 * Open MPI's single-copy shared-memory path writes past it. */
#define PPPM_CHUNK ((size_t) 1 << 17)
static int nchunks(size_t n) { return (int) ((n + PPPM_CHUNK - 1) / PPPM_CHUNK); }

enum { TAG_HDR = 701, TAG_CHARGE = 702, TAG_REPLY = 703, TAG_FIELD = 704 };
#define HDR_INTS(p) (5 + (p)->n[2])

void aisci_pppm_config_default(aisci_pppm_config *cfg)
{
  if (!cfg) return;
  memset(cfg, 0, sizeof(*cfg));
  cfg->box[0][0] = cfg->box[1][1] = cfg->box[2][2] = 1.0;
  cfg->accuracy = 1e-5;
  cfg->order = 5;
  cfg->diff = AISCI_PPPM_IK;
  cfg->qqrd2e = 1.0;
}

static int grow(void **p, size_t need, size_t elem, size_t *cap)
{
  if (need <= *cap && *p) return 1;
  size_t nc = need + need / 2 + 16;
  void *q = realloc(*p, nc * elem);
  if (!q) return 0;
  *p = q;
  *cap = nc;
  return 1;
}

static int growi(void **p, int need, size_t elem, int *cap)
{
  size_t c = (size_t) *cap;
  int ok = grow(p, (size_t) need, elem, &c);
  if (ok) *cap = (int) c;
  return ok;
}

/* Influence function on this rank's k-space block (no communication). */
static aisci_status build_green(aisci_pppm *p, double *qlocal)
{
  pppm_kernel kn;
  aisci_status st = pppm_kernel_init(&kn, p->n, p->order, p->hinv, p->g_eff);
  if (st != AISCI_OK) return st;
  double qs = 0.0;
  memset(p->sf_local, 0, sizeof(p->sf_local));
  for (ptrdiff_t ib = 0; ib < p->local_nb; ib++)
    for (int jc = 0; jc < p->n[2]; jc++)
      for (int ja = 0; ja < p->nh; ja++) {
        int j[3] = {ja, (int) (p->local_b0 + ib), jc};
        size_t idx = ((size_t) ib * p->n[2] + jc) * p->nh + ja;
        int weight = (ja == 0 || (p->n[0] % 2 == 0 && ja == p->n[0] / 2)) ? 1 : 2;
        double q;
        if (p->ad) {
          double sf[2][3][3];
          pppm_green_point_ad(&kn, j, weight == 2, &p->green[idx], qlocal ? &q : NULL, NULL, sf);
          for (int t = 0; t < 18; t++) p->sf_local[t] += (&sf[0][0][0])[t];
        } else {
          pppm_green_point(&kn, j, &p->green[idx], qlocal ? &q : NULL);
        }
        if (qlocal) qs += weight * q;
      }
  pppm_kernel_free(&kn);
  if (qlocal) *qlocal = qs;
  return AISCI_OK;
}

static aisci_status check_config(const aisci_pppm_config *c)
{
  if (c->order < 2 || c->order > AISCI_PPPM_MAX_ORDER)
    return aisci_set_error(AISCI_ERR_ARG, "pppm: order must be 2..%d, got %d",
                           AISCI_PPPM_MAX_ORDER, c->order);
  if (c->diff != AISCI_PPPM_IK && c->diff != AISCI_PPPM_AD)
    return aisci_set_error(AISCI_ERR_ARG, "pppm: unknown differentiation %d (ik = 0, ad = 1)",
                           (int) c->diff);
  if (!(c->accuracy > 0.0) || !isfinite(c->accuracy))
    return aisci_set_error(AISCI_ERR_ARG, "pppm: accuracy must be > 0, got %g", c->accuracy);
  if (!(c->qqrd2e > 0.0) || !isfinite(c->qqrd2e))
    return aisci_set_error(AISCI_ERR_ARG, "pppm: qqrd2e must be > 0, got %g", c->qqrd2e);
  if (!(c->g_ewald >= 0.0) || !isfinite(c->g_ewald))
    return aisci_set_error(AISCI_ERR_ARG, "pppm: g_ewald must be >= 0, got %g", c->g_ewald);
  if (!(c->beta >= 0.0) || !isfinite(c->beta))
    return aisci_set_error(AISCI_ERR_ARG, "pppm: beta must be >= 0, got %g", c->beta);
  if (!(c->cutoff >= 0.0) || !(c->q2sum >= 0.0) || !(c->natoms >= 0.0))
    return aisci_set_error(AISCI_ERR_ARG, "pppm: cutoff, q2sum and natoms must be >= 0");
  if (c->layout != AISCI_PPPM_LAYOUT_RANK && c->layout != AISCI_PPPM_LAYOUT_NODE)
    return aisci_set_error(AISCI_ERR_ARG, "pppm: unknown layout %d (rank = 0, node = 1)",
                           (int) c->layout);
  if (c->ranks_per_node < 0)
    return aisci_set_error(AISCI_ERR_ARG, "pppm: ranks_per_node must be >= 0, got %d",
                           c->ranks_per_node);
  int nzero = (c->grid[0] == 0) + (c->grid[1] == 0) + (c->grid[2] == 0);
  if (nzero != 0 && nzero != 3)
    return aisci_set_error(AISCI_ERR_ARG, "pppm: give all three grid sizes or none (%d %d %d)",
                           c->grid[0], c->grid[1], c->grid[2]);
  for (int d = 0; d < 3; d++)
    if (nzero == 0 && c->grid[d] < c->order)
      return aisci_set_error(AISCI_ERR_ARG,
                             "pppm: grid size %d along cell vector %d is below order %d",
                             c->grid[d], d, c->order);
  if (c->g_ewald == 0.0 && c->beta == 0.0 &&
      !(c->cutoff > 0.0 && c->q2sum > 0.0 && c->natoms > 0.0))
    return aisci_set_error(AISCI_ERR_ARG,
                           "pppm: automatic g_ewald needs cutoff, q2sum and natoms > 0");
  if (nzero == 3 && !(c->q2sum > 0.0 && c->natoms > 0.0))
    return aisci_set_error(AISCI_ERR_ARG, "pppm: automatic grid needs q2sum and natoms > 0");
  return AISCI_OK;
}

/* The mesh n against AISCI_PPPM_MAX_GRID and, collectively over comm, its estimated
 * memory against the physical memory of each node (ranks of one node share it), before
 * anything is allocated: a mesh far too large would otherwise end in a failed malloc
 * (or the system's OOM killer) with no word about the mesh. */
static aisci_status check_mesh(const int n[3], MPI_Comm comm, int solver)
{
  for (int d = 0; d < 3; d++)
    if (n[d] > AISCI_PPPM_MAX_GRID)
      return aisci_set_error(AISCI_ERR_ARG,
                             "pppm: mesh %d x %d x %d: size %d along cell vector %d is above "
                             "the limit %d", n[0], n[1], n[2], n[d], d, AISCI_PPPM_MAX_GRID);
  /* slabs: one per solver rank (every rank in the rank layout) */
  int nprocs = 1, node_ranks = 1;
  MPI_Allreduce(&solver, &nprocs, 1, MPI_INT, MPI_SUM, comm);
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Allreduce(&solver, &node_ranks, 1, MPI_INT, MPI_SUM, node);
    MPI_Comm_free(&node);
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  double mine = pages > 0 && page > 0 ? (double) pages * (double) page : INFINITY, node_mem;
  MPI_Allreduce(&mine, &node_mem, 1, MPI_DOUBLE, MPI_MIN, comm);
  const double points = (double) n[0] * n[1] * n[2];
  const double need = AISCI_PPPM_BYTES_PER_POINT * points / nprocs * node_ranks;
  if (need > node_mem) {
    const double gib = 1024.0 * 1024.0 * 1024.0;
    return aisci_set_error(AISCI_ERR_ARG,
                           "pppm: mesh %d x %d x %d (%.3g points) needs about %.3g GiB per "
                           "node (%d of %d ranks there, %d bytes per point per rank), more "
                           "than the %.3g GiB of memory of a node: use a coarser mesh or a "
                           "lower accuracy",
                           n[0], n[1], n[2], points, need / gib, node_ranks, nprocs,
                           AISCI_PPPM_BYTES_PER_POINT, node_mem / gib);
  }
  return AISCI_OK;
}

/* Collective error agreement: every rank learns the worst status. */
static aisci_status agree(MPI_Comm comm, aisci_status st)
{
  int mine = (int) st, worst = 0;
  if (MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
    return aisci_set_error(AISCI_ERR_MPI, "pppm: MPI_Allreduce failed");
  if (worst != AISCI_OK && mine == AISCI_OK)
    return aisci_set_error((aisci_status) worst, "pppm: failed on another rank");
  return (aisci_status) worst;
}

static aisci_status setup_buffers(aisci_pppm *p);
static aisci_status setup_fft(aisci_pppm *p, const aisci_pppm_config *cfg);

/* comm_atoms (all ranks); in the rank layout comm_fft = all ranks; in the node layout
 * comm_node (the ranks of one node, real or pretend) and comm_fft = the node-local
 * ranks 0 (MPI_COMM_NULL elsewhere). p->rank and p->nprocs are those of comm_fft. */
static aisci_status setup_comms(aisci_pppm *p, const aisci_pppm_config *cfg, MPI_Comm comm)
{
  int world_rank;
  p->layout = cfg->layout;
  if (MPI_Comm_dup(comm, &p->comm_atoms) != MPI_SUCCESS)
    return aisci_set_error(AISCI_ERR_MPI, "pppm_create: MPI_Comm_dup failed");
  MPI_Comm_rank(comm, &world_rank);
  if (cfg->layout == AISCI_PPPM_LAYOUT_RANK) {
    p->solver = 1;
    p->node_size = 1;
    if (MPI_Comm_dup(comm, &p->comm_fft) != MPI_SUCCESS)
      return aisci_set_error(AISCI_ERR_MPI, "pppm_create: MPI_Comm_dup failed");
  } else {
    int rc = cfg->ranks_per_node > 0
                 ? MPI_Comm_split(comm, world_rank / cfg->ranks_per_node, world_rank,
                                  &p->comm_node)
                 : MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL,
                                       &p->comm_node);
    if (rc != MPI_SUCCESS)
      return aisci_set_error(AISCI_ERR_MPI, "pppm_create: could not split the ranks by node");
    /* a failed receive (truncated on purpose after an allocation failure) must return */
    MPI_Comm_set_errhandler(p->comm_node, MPI_ERRORS_RETURN);
    MPI_Comm_rank(p->comm_node, &p->node_rank);
    MPI_Comm_size(p->comm_node, &p->node_size);
    p->solver = p->node_rank == 0;
    if (MPI_Comm_split(comm, p->solver ? 0 : MPI_UNDEFINED, world_rank, &p->comm_fft) !=
        MPI_SUCCESS)
      return aisci_set_error(AISCI_ERR_MPI, "pppm_create: could not group the node solvers");
  }
  MPI_Allreduce(&p->solver, &p->nnodes, 1, MPI_INT, MPI_SUM, p->comm_atoms);
  if (p->solver) {
    MPI_Comm_rank(p->comm_fft, &p->rank);
    MPI_Comm_size(p->comm_fft, &p->nprocs);
  }
  return AISCI_OK;
}

aisci_status aisci_pppm_create(const aisci_pppm_config *cfg, MPI_Comm comm, aisci_pppm **out)
{
  if (!out) return aisci_set_error(AISCI_ERR_ARG, "pppm_create: out is NULL");
  *out = NULL;
  if (!cfg) return aisci_set_error(AISCI_ERR_ARG, "pppm_create: config is NULL");
  if (comm == MPI_COMM_NULL) return aisci_set_error(AISCI_ERR_ARG, "pppm_create: comm is NULL");
  aisci_status st = check_config(cfg);
  if (st != AISCI_OK) return st;
  double hinv[3][3], volume;
  st = pppm_invert_box(cfg->box, hinv, &volume);
  if (st != AISCI_OK) return st;

  aisci_pppm *p = calloc(1, sizeof(*p));
  if (!p) return aisci_set_error(AISCI_ERR_ALLOC, "pppm_create: out of memory");
  p->comm_atoms = p->comm_fft = p->comm_node = MPI_COMM_NULL;
  st = setup_comms(p, cfg, comm);
  if (st != AISCI_OK) {
    aisci_pppm_destroy(p);
    return st;
  }
  MPI_Query_thread(&p->thread_level);
  p->order = cfg->order;
  p->ad = cfg->diff == AISCI_PPPM_AD;
  p->ncomp = p->ad ? 1 : 3;
  p->wstride = p->ad ? 6 * cfg->order + 3 : 3 * cfg->order;
  p->qqrd2e = cfg->qqrd2e;
  p->accuracy = cfg->accuracy;
  p->beta = cfg->beta;
  p->cutoff = cfg->cutoff;
  p->q2sum = cfg->q2sum;
  p->natoms = cfg->natoms;
  memcpy(p->box, cfg->box, sizeof(p->box));
  memcpy(p->hinv, hinv, sizeof(p->hinv));
  p->volume = volume;

  /* Ewald parameter. With Gaussian charges (beta > 0) the reciprocal kernel is
   * exp(-k^2/4g^2) exp(-k^2/4beta^2) = exp(-k^2/4 g_eff^2). */
  if (cfg->g_ewald > 0.0) {
    p->g_ewald = cfg->g_ewald;
  } else if (cfg->beta > 0.0) {
    p->g_ewald = INFINITY;
  } else {
    /* Kolafa-Perram: real-space RMS force error 2 q2 exp(-g^2 rc^2) / sqrt(N rc V) */
    double rc = cfg->cutoff;
    double arg = cfg->accuracy * sqrt(cfg->natoms * rc * volume) / (2.0 * cfg->q2sum);
    p->g_ewald = arg < 1.0 ? sqrt(-log(arg)) / rc : sqrt(-log(cfg->accuracy)) / rc;
  }
  if (cfg->beta > 0.0)
    p->g_eff = isinf(p->g_ewald) ? cfg->beta
                                 : 1.0 / sqrt(1.0 / (p->g_ewald * p->g_ewald) +
                                              1.0 / (cfg->beta * cfg->beta));
  else
    p->g_eff = p->g_ewald;
  if (isinf(p->g_ewald))
    p->real_error = 0.0;
  else if (cfg->cutoff > 0.0 && cfg->q2sum > 0.0 && cfg->natoms > 0.0)
    p->real_error = 2.0 * cfg->q2sum * exp(-p->g_eff * p->g_eff * cfg->cutoff * cfg->cutoff) /
                    sqrt(cfg->natoms * cfg->cutoff * volume);
  else
    p->real_error = -1.0;

  double qsum = 0.0;
  int auto_grid = cfg->grid[0] == 0;
  if (auto_grid) {
    /* ad: the functional leaves out the self-force left after the two-harmonic
     * correction, measured at up to ~10% of the error on coarse grids: aim lower */
    double target = p->ad ? 0.85 * cfg->accuracy : cfg->accuracy;
    st = pppm_choose_grid(hinv, volume, p->order, p->ad, p->g_eff, target, cfg->q2sum,
                          cfg->natoms, p->comm_atoms, p->n, &qsum);
    if (st != AISCI_OK) {
      aisci_pppm_destroy(p);
      return st;
    }
  } else {
    memcpy(p->n, cfg->grid, sizeof(p->n));
  }
  p->nh = p->n[0] / 2 + 1;
  st = check_mesh(p->n, p->comm_atoms, p->solver);
  if (st != AISCI_OK) {
    aisci_pppm_destroy(p);
    return st;
  }
  st = agree(p->comm_atoms, setup_buffers(p));
  if (st == AISCI_OK && p->solver) st = setup_fft(p, cfg);
  st = agree(p->comm_atoms, st);
  if (st != AISCI_OK) {
    aisci_pppm_destroy(p);
    return st;
  }

  double qlocal = 0.0;
  st = agree(p->comm_atoms, p->solver ? build_green(p, auto_grid ? NULL : &qlocal) : AISCI_OK);
  if (st != AISCI_OK) {
    aisci_pppm_destroy(p);
    return st;
  }
  if (!auto_grid) MPI_Allreduce(&qlocal, &qsum, 1, MPI_DOUBLE, MPI_SUM, p->comm_atoms);
  p->kspace_error = pppm_kspace_error(qsum, cfg->q2sum, cfg->natoms, volume);
  p->state = PPPM_IDLE;
  *out = p;
  return AISCI_OK;
}

/* Buffers every rank needs (spread, interpolate, the hand-off). */
static aisci_status setup_buffers(aisci_pppm *p)
{
  p->slot_of_plane = malloc(sizeof(int) * p->n[2]);
  p->touched_a = malloc((size_t) p->n[0]);
  p->touched_b = malloc((size_t) p->n[1]);
  int ok = p->slot_of_plane && p->touched_a && p->touched_b;
  if (p->layout == AISCI_PPPM_LAYOUT_NODE && p->solver) {
    p->node_hdr = malloc(sizeof(int) * (size_t) p->node_size * HDR_INTS(p));
    p->node_off = malloc(sizeof(size_t) * ((size_t) p->node_size + 1));
    p->node_plane_of_slot = malloc(sizeof(int) * p->n[2]);
    p->node_slot_of_plane = malloc(sizeof(int) * p->n[2]);
    p->drain = malloc(sizeof(double) * PPPM_CHUNK);
    p->node_req = malloc(sizeof(MPI_Request) * 2 * (size_t) p->node_size);
    ok = ok && p->node_hdr && p->node_off && p->node_plane_of_slot && p->node_slot_of_plane &&
         p->drain && p->node_req;
  } else if (p->layout == AISCI_PPPM_LAYOUT_NODE) {
    p->hdr_out = malloc(sizeof(int) * HDR_INTS(p));
    ok = ok && p->hdr_out;
  }
  return ok ? AISCI_OK : aisci_set_error(AISCI_ERR_ALLOC, "pppm_create: out of memory");
}

/* FFT layout, grids and plans: solver ranks only (collective on comm_fft). */
static aisci_status setup_fft(aisci_pppm *p, const aisci_pppm_config *cfg)
{
  aisci_status st;
  fftw_mpi_init();
  p->alloc_local = fftw_mpi_local_size_3d_transposed(p->n[2], p->n[1], p->nh, p->comm_fft,
                                                     &p->local_nc, &p->local_c0, &p->local_nb,
                                                     &p->local_b0);
  size_t nreal = 2 * (size_t) (p->alloc_local > 0 ? p->alloc_local : 1);
  p->rho = fftw_alloc_real(nreal);
  for (int d = 0; d < 3; d++) p->field[d] = fftw_alloc_real(nreal);
  p->rho_k = fftw_alloc_complex(nreal / 2);
  p->work_k = fftw_alloc_complex(nreal / 2);
  p->green = malloc(sizeof(double) * ((size_t) p->local_nb * p->n[2] * p->nh + 1));
  p->c_start = malloc(sizeof(int) * p->nprocs);
  p->c_count = malloc(sizeof(int) * p->nprocs);
  p->owner = malloc(sizeof(int) * p->n[2]);
  p->scount = malloc(sizeof(int) * 12 * p->nprocs);
  /* an allocation failure is agreed on over comm_fft before any further collective */
  int ok = p->rho && p->field[0] && p->field[1] && p->field[2] && p->rho_k && p->work_k &&
           p->green && p->c_start && p->c_count && p->owner && p->scount;
  st = agree(p->comm_fft, ok ? AISCI_OK
                             : aisci_set_error(AISCI_ERR_ALLOC,
                                               "pppm_create: out of memory for grids"));
  if (st != AISCI_OK) return st;
  p->sdispl = p->scount + p->nprocs;
  p->rcount = p->scount + 2 * p->nprocs;
  p->rdispl = p->scount + 3 * p->nprocs;
  p->scnt_d = p->scount + 4 * p->nprocs;
  p->sdsp_d = p->scount + 5 * p->nprocs;
  p->rcnt_d = p->scount + 6 * p->nprocs;
  p->rdsp_d = p->scount + 7 * p->nprocs;
  p->rect_all = p->scount + 8 * p->nprocs;
  int mine[2] = {(int) p->local_c0, (int) p->local_nc};
  int *both = malloc(sizeof(int) * 2 * p->nprocs);
  st = agree(p->comm_fft,
             both ? AISCI_OK : aisci_set_error(AISCI_ERR_ALLOC, "pppm_create: out of memory"));
  if (st != AISCI_OK) {
    free(both);
    return st;
  }
  if (MPI_Allgather(mine, 2, MPI_INT, both, 2, MPI_INT, p->comm_fft) != MPI_SUCCESS) {
    free(both);
    return aisci_set_error(AISCI_ERR_MPI, "pppm_create: MPI_Allgather of slabs failed");
  }
  for (int r = 0; r < p->nprocs; r++) {
    p->c_start[r] = both[2 * r];
    p->c_count[r] = both[2 * r + 1];
    for (int c = p->c_start[r]; c < p->c_start[r] + p->c_count[r]; c++) p->owner[c] = r;
  }
  free(both);

  unsigned flags = cfg->fft_measure ? FFTW_MEASURE : FFTW_ESTIMATE;
  p->plan_fwd = fftw_mpi_plan_dft_r2c_3d(p->n[2], p->n[1], p->n[0], p->rho, p->rho_k, p->comm_fft,
                                         flags | FFTW_MPI_TRANSPOSED_OUT);
  p->plan_bwd = fftw_mpi_plan_dft_c2r_3d(p->n[2], p->n[1], p->n[0], p->work_k, p->field[0],
                                         p->comm_fft, flags | FFTW_MPI_TRANSPOSED_IN);
  return (p->plan_fwd && p->plan_bwd)
             ? AISCI_OK
             : aisci_set_error(AISCI_ERR_FFT, "pppm_create: FFTW could not plan a %d x %d x %d "
                                              "transform", p->n[0], p->n[1], p->n[2]);
}

void aisci_pppm_destroy(aisci_pppm *p)
{
  if (!p) return;
  if (p->plan_fwd) fftw_destroy_plan(p->plan_fwd);
  if (p->plan_bwd) fftw_destroy_plan(p->plan_bwd);
  fftw_free(p->rho);
  for (int d = 0; d < 3; d++) fftw_free(p->field[d]);
  fftw_free(p->rho_k);
  fftw_free(p->work_k);
  free(p->green);
  free(p->c_start);
  free(p->c_count);
  free(p->owner);
  free(p->slot_of_plane);
  free(p->plane_of_slot);
  free(p->planes);
  free(p->scount);
  free(p->recv_plane);
  free(p->recvbuf);
  free(p->base);
  free(p->w);
  free(p->touched_a);
  free(p->touched_b);
  free(p->node_hdr);
  free(p->node_off);
  free(p->node_data);
  free(p->node_plane_of_slot);
  free(p->node_slot_of_plane);
  free(p->node_planes);
  free(p->hdr_out);
  free(p->drain);
  free(p->node_req);
  free(p->req);
  if (p->comm_atoms != MPI_COMM_NULL) MPI_Comm_free(&p->comm_atoms);
  if (p->comm_fft != MPI_COMM_NULL) MPI_Comm_free(&p->comm_fft);
  if (p->comm_node != MPI_COMM_NULL) MPI_Comm_free(&p->comm_node);
  free(p);
}

aisci_status aisci_pppm_get_info(const aisci_pppm *p, aisci_pppm_info *info)
{
  if (!p || !info) return aisci_set_error(AISCI_ERR_ARG, "pppm_get_info: NULL argument");
  memcpy(info->grid, p->n, sizeof(info->grid));
  info->g_ewald = p->g_ewald;
  info->g_eff = p->g_eff;
  info->kspace_error = p->kspace_error;
  info->real_error = p->real_error;
  info->local_planes = p->solver ? (int) p->local_nc : 0;
  info->mpi_thread_level = p->thread_level;
  info->layout = p->layout;
  info->solver = p->solver;
  info->nodes = p->nnodes;
  info->node_ranks = p->layout == AISCI_PPPM_LAYOUT_NODE ? p->node_size : 1;
  return AISCI_OK;
}

aisci_status aisci_pppm_set_box(aisci_pppm *p, const double box[3][3])
{
  if (!p || !box) return aisci_set_error(AISCI_ERR_ARG, "pppm_set_box: NULL argument");
  if (p->state != PPPM_IDLE)
    return aisci_set_error(AISCI_ERR_STATE, "pppm_set_box: called between spread and interpolate");
  if (memcmp(box, p->box, sizeof(p->box)) == 0) return AISCI_OK;
  double hinv[3][3], volume;
  aisci_status st = pppm_invert_box(box, hinv, &volume);
  if (st != AISCI_OK) return st;
  memcpy(p->box, box, sizeof(p->box));
  memcpy(p->hinv, hinv, sizeof(p->hinv));
  p->volume = volume;
  return p->solver ? build_green(p, NULL) : AISCI_OK;
}

static inline int wrap(int i, int n)
{
  i %= n;
  return i < 0 ? i + n : i;
}

/* Shortest periodic interval covering the marked indices of touched[0..n-1]: the
 * complement of the longest circular run of unmarked ones. first/len; len 0 if none. */
static void cover_arc(const unsigned char *touched, int n, int *first, int *len)
{
  int any = 0;
  for (int i = 0; i < n; i++) any |= touched[i];
  if (!any) {
    *first = 0;
    *len = 0;
    return;
  }
  int best = 0, best_end = -1, run = 0;
  /* two sweeps so that a gap across n-1 -> 0 is seen whole */
  for (int k = 0; k < 2 * n; k++) {
    if (!touched[k % n]) {
      run++;
      if (run > best && run <= n) {
        best = run;
        best_end = k % n;
      }
    } else {
      run = 0;
    }
  }
  if (best == 0) {
    *first = 0;
    *len = n;
  } else {
    *first = (best_end + 1) % n;
    *len = n - best;
  }
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
static inline void add_run(double *dst, int first, int len, int n, const double *src)
{
  int l1 = len < n - first ? len : n - first;
  for (int a = 0; a < l1; a++) dst[first + a] += src[a];
  for (int a = l1; a < len; a++) dst[a - l1] += src[a];
}

static inline void copy_run(double *dst, const double *src, int first, int len, int n)
{
  int l1 = len < n - first ? len : n - first;
  memcpy(dst, src + first, sizeof(double) * (size_t) l1);
  if (len > l1) memcpy(dst + l1, src, sizeof(double) * (size_t) (len - l1));
}

/* The charge exchange that completes the spread, run at the start of solve (it touches
 * no atom array, so it may run on solve's thread): sum the patch of every rank of comm
 * (solver ranks: nodes in the node layout) onto the owners of their planes, into the
 * padded FFT slab. Collective on comm. */
static aisci_status exchange_charges(aisci_pppm *p, const pppm_patch *pt, MPI_Comm comm)
{
  aisci_status st = AISCI_OK;
  const int n0 = p->n[0], n1 = p->n[1], ns = pt->nslots;
  const size_t patch = (size_t) pt->rect[1] * pt->rect[3];
  /* Sum the patches onto the planes' owners. Slots are in increasing c, and owners
   * hold contiguous blocks of c in rank order, so each destination is one run of slots. */
  for (int r = 0; r < p->nprocs; r++) p->scount[r] = 0;
  for (int s = 0; s < ns; s++) p->scount[p->owner[pt->plane_of_slot[s]]]++;
  p->sdispl[0] = 0;
  for (int r = 1; r < p->nprocs; r++) p->sdispl[r] = p->sdispl[r - 1] + p->scount[r - 1];
  if (MPI_Alltoall(p->scount, 1, MPI_INT, p->rcount, 1, MPI_INT, comm) != MPI_SUCCESS ||
      MPI_Allgather((void *) pt->rect, 4, MPI_INT, p->rect_all, 4, MPI_INT, comm) !=
          MPI_SUCCESS)
    return aisci_set_error(AISCI_ERR_MPI, "pppm_solve: MPI_Alltoall of the charge patches failed");
  p->rdispl[0] = 0;
  for (int r = 1; r < p->nprocs; r++) p->rdispl[r] = p->rdispl[r - 1] + p->rcount[r - 1];
  int nrecv = p->rdispl[p->nprocs - 1] + p->rcount[p->nprocs - 1];
  size_t nrecv_d = 0;
  for (int r = 0; r < p->nprocs; r++) {
    size_t rpatch = (size_t) p->rect_all[4 * r + 1] * p->rect_all[4 * r + 3];
    p->scnt_d[r] = (int) (p->scount[r] * patch);
    p->sdsp_d[r] = (int) (p->sdispl[r] * patch);
    p->rcnt_d[r] = (int) (p->rcount[r] * rpatch);
    p->rdsp_d[r] = (int) nrecv_d;
    nrecv_d += p->rcount[r] * rpatch;
  }
  if (!growi((void **) &p->recv_plane, nrecv, sizeof(int), &p->recv_cap) ||
      !grow((void **) &p->recvbuf, 3 * nrecv_d, sizeof(double), &p->recvbuf_cap))
    st = aisci_set_error(AISCI_ERR_ALLOC, "pppm_solve: out of memory for %d received planes",
                         nrecv);
  st = agree(comm, st);
  if (st != AISCI_OK) return st;
  p->nrecv = nrecv;
  if (MPI_Alltoallv((void *) pt->plane_of_slot, p->scount, p->sdispl, MPI_INT, p->recv_plane,
                    p->rcount, p->rdispl, MPI_INT, comm) != MPI_SUCCESS ||
      MPI_Alltoallv(pt->planes, p->scnt_d, p->sdsp_d, MPI_DOUBLE, p->recvbuf, p->rcnt_d,
                    p->rdsp_d, MPI_DOUBLE, comm) != MPI_SUCCESS)
    return aisci_set_error(AISCI_ERR_MPI, "pppm_solve: MPI_Alltoallv of the charge patches failed");

  /* Received patches, summed in rank order (for a given grid point the same order at
   * any rank count: sources ascending), into the padded FFT slab */
  const size_t stride = 2 * (size_t) p->nh;
  memset(p->rho, 0, sizeof(double) * 2 * (size_t) (p->alloc_local > 0 ? p->alloc_local : 1));
  for (int r = 0; r < p->nprocs; r++) {
    const int *rr = p->rect_all + 4 * r;
    const double *src = p->recvbuf + p->rdsp_d[r];
    for (int s = p->rdispl[r]; s < p->rdispl[r] + p->rcount[r]; s++) {
      double *dst = p->rho + (size_t) (p->recv_plane[s] - (int) p->local_c0) * n1 * stride;
      for (int b = 0; b < rr[3]; b++) {
        add_run(dst + (size_t) wrap(rr[2] + b, n1) * stride, rr[0], rr[1], n0, src);
        src += rr[1];
      }
    }
  }
  return AISCI_OK;
}

/* Interpolate step 1, run by solve: the owners send the field components (3 for ik, the
 * potential for ad) of every patch they received back to the patch's rank, into
 * pt->planes. Collective on comm. */
static aisci_status exchange_fields(aisci_pppm *p, const pppm_patch *pt, MPI_Comm comm)
{
  const int n0 = p->n[0], n1 = p->n[1];
  const size_t stride = 2 * (size_t) p->nh;
  const int nc = p->ncomp;
  for (int r = 0; r < p->nprocs; r++) {
    const int *rr = p->rect_all + 4 * r;
    double *dst = p->recvbuf + nc * (size_t) p->rdsp_d[r];
    for (int s = p->rdispl[r]; s < p->rdispl[r] + p->rcount[r]; s++) {
      size_t off = (size_t) (p->recv_plane[s] - (int) p->local_c0) * n1 * stride;
      for (int d = 0; d < nc; d++) {
        const double *src = p->field[d] + off;
        for (int b = 0; b < rr[3]; b++) {
          copy_run(dst, src + (size_t) wrap(rr[2] + b, n1) * stride, rr[0], rr[1], n0);
          dst += rr[1];
        }
      }
    }
  }
  for (int r = 0; r < p->nprocs; r++) {
    p->scnt_d[r] *= nc;
    p->sdsp_d[r] *= nc;
    p->rcnt_d[r] *= nc;
    p->rdsp_d[r] *= nc;
  }
  if (MPI_Alltoallv(p->recvbuf, p->rcnt_d, p->rdsp_d, MPI_DOUBLE, pt->planes, p->scnt_d,
                    p->sdsp_d, MPI_DOUBLE, comm) != MPI_SUCCESS)
    return aisci_set_error(AISCI_ERR_MPI, "pppm_solve: MPI_Alltoallv of the field failed");
  return AISCI_OK;
}

aisci_status aisci_pppm_spread(aisci_pppm *p, int n, const double *x, const double *q)
{
  if (!p) return aisci_set_error(AISCI_ERR_ARG, "pppm_spread: pppm is NULL");
  if (p->state != PPPM_IDLE)
    return aisci_set_error(AISCI_ERR_STATE, "pppm_spread: previous step not interpolated");
  const int P = p->order, n0 = p->n[0], n1 = p->n[1], n2 = p->n[2];
  /* Argument errors are agreed on with the other ranks below, so that a bad call on
   * one rank fails everywhere instead of leaving the others in a collective. */
  aisci_status st = AISCI_OK;
  if (n < 0 || (n > 0 && (!x || !q))) {
    st = aisci_set_error(AISCI_ERR_ARG, "pppm_spread: need n >= 0 and x, q for n > 0");
    n = 0;
  }

  /* 1. Assignment weights; the planes (along c) and the rows and columns (a, b) that
   * the atoms touch */
  const int ws = p->wstride;
  size_t cap = (size_t) p->atom_cap * 3, cap2 = (size_t) p->atom_cap * ws;
  if (!grow((void **) &p->base, 3 * (size_t) n, sizeof(int), &cap) ||
      !grow((void **) &p->w, (size_t) n * ws, sizeof(double), &cap2))
    st = aisci_set_error(AISCI_ERR_ALLOC, "pppm_spread: out of memory for %d atoms", n);
  else
    p->atom_cap = (int) (cap / 3 < cap2 / ws ? cap / 3 : cap2 / ws);
  for (int c = 0; c < n2; c++) p->slot_of_plane[c] = -1;
  memset(p->touched_a, 0, (size_t) n0);
  memset(p->touched_b, 0, (size_t) n1);
  for (int i = 0; st == AISCI_OK && i < n; i++) {
    for (int d = 0; d < 3; d++) {
      double s = x[3 * i] * p->hinv[0][d] + x[3 * i + 1] * p->hinv[1][d] +
                 x[3 * i + 2] * p->hinv[2][d];
      if (!isfinite(s)) {
        st = aisci_set_error(AISCI_ERR_ARG, "pppm_spread: atom %d has a non-finite position", i);
        break;
      }
      /* fold into [0, 1) first so that huge coordinates keep their precision on the grid */
      s -= floor(s);
      double *wi = &p->w[(size_t) i * ws];
      int first = pppm_bspline(s * p->n[d], P, wi + d * P, p->ad ? wi + (3 + d) * P : NULL);
      if (p->ad) wi[6 * P + d] = s * p->n[d];
      p->base[3 * i + d] = wrap(first, p->n[d]);
    }
    if (st != AISCI_OK) break;
    for (int k = 0; k < P; k++) {
      p->touched_a[wrap(p->base[3 * i] + k, n0)] = 1;
      p->touched_b[wrap(p->base[3 * i + 1] + k, n1)] = 1;
      p->slot_of_plane[wrap(p->base[3 * i + 2] + k, n2)] = 0;
    }
  }
  st = agree(p->comm_atoms, st);
  if (st != AISCI_OK) return st;
  p->natoms_local = n;
  cover_arc(p->touched_a, n0, &p->rect[0], &p->rect[1]);
  cover_arc(p->touched_b, n1, &p->rect[2], &p->rect[3]);
  const int sa = p->rect[0], la = p->rect[1], sb = p->rect[2], lb = p->rect[3];
  const size_t patch = (size_t) la * lb; /* my part of one plane */
  int ns = 0;
  for (int c = 0; c < n2; c++)
    if (p->slot_of_plane[c] == 0) ns++;
  if (!growi((void **) &p->plane_of_slot, ns, sizeof(int), &p->slot_cap) ||
      !grow((void **) &p->planes, 3 * (size_t) ns * patch, sizeof(double), &p->planes_cap) ||
      /* node layout, not a solver: the field patches come back into recvbuf */
      (!p->solver &&
       (!grow((void **) &p->recvbuf, 3 * (size_t) ns * patch, sizeof(double), &p->recvbuf_cap) ||
        !growi((void **) &p->req, 3 + nchunks((size_t) ns * patch), sizeof(MPI_Request),
               &p->req_cap))))
    st = aisci_set_error(AISCI_ERR_ALLOC, "pppm_spread: out of memory for %d grid planes", ns);
  st = agree(p->comm_atoms, st);
  if (st != AISCI_OK) return st;
  p->nslots = 0;
  for (int c = 0; c < n2; c++)
    if (p->slot_of_plane[c] == 0) {
      p->plane_of_slot[p->nslots] = c;
      p->slot_of_plane[c] = p->nslots++;
    }

  /* 2. Charge assignment into the touched patches: point (a, b) of a plane sits at
   * ((b - sb) mod n1) * la + ((a - sa) mod n0). From here on base[] holds the offsets
   * inside the patch along a and b. */
  memset(p->planes, 0, sizeof(double) * ns * patch);
  for (int i = 0; i < n; i++) {
    p->base[3 * i] = wrap(p->base[3 * i] - sa, n0);
    p->base[3 * i + 1] = wrap(p->base[3 * i + 1] - sb, n1);
    const double *wa = &p->w[(size_t) i * ws], *wb = wa + P, *wc = wb + P;
    int ba = p->base[3 * i], bb = p->base[3 * i + 1], bc = p->base[3 * i + 2];
    int ia[AISCI_PPPM_MAX_ORDER];
    for (int k = 0; k < P; k++) ia[k] = wrap(ba + k, n0);
    for (int kc = 0; kc < P; kc++) {
      double *pl = p->planes + (size_t) p->slot_of_plane[wrap(bc + kc, n2)] * patch;
      double qc = q[i] * wc[kc];
      for (int kb = 0; kb < P; kb++) {
        double *row = pl + (size_t) wrap(bb + kb, n1) * la;
        double qcb = qc * wb[kb];
        for (int ka = 0; ka < P; ka++) row[ia[ka]] += qcb * wa[ka];
      }
    }
  }

  p->state = PPPM_SPREAD;
  return AISCI_OK;
}

/* The grid work of one solve on the solver ranks (collective on comm_fft): the patches
 * pt summed onto the planes' owners, FFTs, influence function, energy and virial into
 * p, field patches back into pt->planes. */
static aisci_status solve_mesh(aisci_pppm *p, const pppm_patch *pt)
{
  aisci_status st = exchange_charges(p, pt, p->comm_fft);
  if (st != AISCI_OK) return st;
  fftw_mpi_execute_dft_r2c(p->plan_fwd, p->rho, p->rho_k);

  const int n0 = p->n[0], n1 = p->n[1], n2 = p->n[2], nh = p->nh;
  const double inv4g2 = 0.25 / (p->g_eff * p->g_eff);
  double sums[7] = {0, 0, 0, 0, 0, 0, 0};
  for (ptrdiff_t ib = 0; ib < p->local_nb; ib++) {
    int mb = pppm_signed_index((int) (p->local_b0 + ib), n1);
    for (int jc = 0; jc < n2; jc++) {
      int mc = pppm_signed_index(jc, n2);
      for (int ja = 0; ja < nh; ja++) {
        size_t idx = ((size_t) ib * n2 + jc) * nh + ja;
        double g = p->green[idx];
        if (g == 0.0) continue;
        int ma = ja;
        double k[3];
        for (int a = 0; a < 3; a++)
          k[a] = 2.0 * M_PI * (p->hinv[a][0] * ma + p->hinv[a][1] * mb + p->hinv[a][2] * mc);
        double ksq = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
        double weight = (ja == 0 || (n0 % 2 == 0 && ja == n0 / 2)) ? 1.0 : 2.0;
        double re = p->rho_k[idx][0], im = p->rho_k[idx][1];
        double e = weight * g * (re * re + im * im);
        double c = 2.0 * (1.0 / ksq + inv4g2);
        sums[0] += e;
        sums[1] += e * (1.0 - c * k[0] * k[0]);
        sums[2] += e * (1.0 - c * k[1] * k[1]);
        sums[3] += e * (1.0 - c * k[2] * k[2]);
        sums[4] += -e * c * k[0] * k[1];
        sums[5] += -e * c * k[0] * k[2];
        sums[6] += -e * c * k[1] * k[2];
      }
    }
  }
  /* with ad, the self-force sums of the influence function ride along (they change only
   * with the cell, but one reduction per step is cheaper than a separate collective) */
  double in[25], tot[25];
  memcpy(in, sums, sizeof(sums));
  memcpy(in + 7, p->sf_local, sizeof(p->sf_local));
  int nred = p->ad ? 25 : 7;
  if (MPI_Allreduce(in, tot, nred, MPI_DOUBLE, MPI_SUM, p->comm_fft) != MPI_SUCCESS)
    return aisci_set_error(AISCI_ERR_MPI, "pppm_solve: MPI_Allreduce failed");
  double scale = p->qqrd2e / (2.0 * p->volume);
  p->energy = scale * tot[0];
  for (int v = 0; v < 6; v++) p->virial[v] = scale * tot[v + 1];
  /* self-force coefficient per unit charge^2 (without qqrd2e): -(1/V) sum_k G sum_M ... */
  if (p->ad)
    for (int t = 0; t < 18; t++) p->sf_coef[t] = -tot[7 + t] / p->volume;

  if (p->ad) {
    /* ad: the mesh potential phi(k) = G(k) rho(k), one inverse FFT */
    size_t nk = (size_t) p->local_nb * n2 * nh;
    for (size_t idx = 0; idx < nk; idx++) {
      p->work_k[idx][0] = p->green[idx] * p->rho_k[idx][0];
      p->work_k[idx][1] = p->green[idx] * p->rho_k[idx][1];
    }
    fftw_mpi_execute_dft_c2r(p->plan_bwd, p->work_k, p->field[0]);
  }
  /* ik: field E = -grad phi: E_d(k) = -i k_d G(k) rho(k), one inverse FFT per component */
  for (int d = 0; d < 3 && !p->ad; d++) {
    for (ptrdiff_t ib = 0; ib < p->local_nb; ib++) {
      int mb = pppm_signed_index((int) (p->local_b0 + ib), n1);
      for (int jc = 0; jc < n2; jc++) {
        int mc = pppm_signed_index(jc, n2);
        for (int ja = 0; ja < nh; ja++) {
          size_t idx = ((size_t) ib * n2 + jc) * nh + ja;
          double kd =
              2.0 * M_PI * (p->hinv[d][0] * ja + p->hinv[d][1] * mb + p->hinv[d][2] * mc);
          double f = kd * p->green[idx];
          p->work_k[idx][0] = f * p->rho_k[idx][1];
          p->work_k[idx][1] = -f * p->rho_k[idx][0];
        }
      }
    }
    fftw_mpi_execute_dft_c2r(p->plan_bwd, p->work_k, p->field[d]);
  }
  return exchange_fields(p, pt, p->comm_fft);
}

/* Node layout, solver: receive the headers and charge patches of the node's other
 * ranks (node_hdr, node_data; this rank's own patch is copied in as rank 0) and sum them
 * into the node patch. Every message of the step is received even when memory runs out
 * (the chunks then into the drain buffer), so that the other ranks are never left
 * waiting. */
static aisci_status gather_node(aisci_pppm *p)
{
  aisci_status st = AISCI_OK;
  const int S = p->node_size, H = HDR_INTS(p), n0 = p->n[0], n1 = p->n[1], n2 = p->n[2];
  int *h0 = p->node_hdr;
  memcpy(h0, p->rect, sizeof(int) * 4);
  h0[4] = p->nslots;
  memcpy(h0 + 5, p->plane_of_slot, sizeof(int) * (size_t) p->nslots);
  for (int r = 1; r < S; r++)
    if (MPI_Recv(p->node_hdr + (size_t) r * H, H, MPI_INT, r, TAG_HDR, p->comm_node,
                 MPI_STATUS_IGNORE) != MPI_SUCCESS)
      st = aisci_set_error(AISCI_ERR_MPI, "pppm_solve: receiving a patch header failed");
  /* (a ranks whose header failed to arrive sends no data we could size: MPI errors are
   * fatal under the default handler of the other communicators anyway) */
  if (st != AISCI_OK) return st;
  p->node_off[0] = 0;
  for (int r = 0; r < S; r++) {
    const int *h = p->node_hdr + (size_t) r * H;
    p->node_off[r + 1] = p->node_off[r] + (size_t) h[4] * h[1] * h[3];
  }
  const size_t total = p->node_off[S];
  if (!grow((void **) &p->node_data, 3 * total, sizeof(double), &p->node_data_cap))
    st = aisci_set_error(AISCI_ERR_ALLOC,
                         "pppm_solve: out of memory for the %zu charge-patch values of the %d "
                         "ranks of this node", total, S);
  for (int r = 1; r < S; r++) {
    const size_t cnt = p->node_off[r + 1] - p->node_off[r];
    for (int k = 0; k < nchunks(cnt); k++) {
      const size_t off = (size_t) k * PPPM_CHUNK;
      const size_t len = cnt - off < PPPM_CHUNK ? cnt - off : PPPM_CHUNK;
      int rc = MPI_Recv(st == AISCI_OK ? p->node_data + p->node_off[r] + off : p->drain,
                        (int) len, MPI_DOUBLE, r, TAG_CHARGE, p->comm_node, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS && st == AISCI_OK)
        st = aisci_set_error(AISCI_ERR_MPI, "pppm_solve: receiving a charge patch failed");
    }
  }
  if (st != AISCI_OK) return st;
  memcpy(p->node_data, p->planes, sizeof(double) * p->node_off[1]);

  /* the node patch: covering arcs of the ranks' arcs along a and b, union of planes */
  memset(p->touched_a, 0, (size_t) n0);
  memset(p->touched_b, 0, (size_t) n1);
  for (int c = 0; c < n2; c++) p->node_slot_of_plane[c] = -1;
  for (int r = 0; r < S; r++) {
    const int *h = p->node_hdr + (size_t) r * H;
    if (h[4] == 0 || h[1] == 0 || h[3] == 0) continue;
    for (int a = 0; a < h[1]; a++) p->touched_a[wrap(h[0] + a, n0)] = 1;
    for (int b = 0; b < h[3]; b++) p->touched_b[wrap(h[2] + b, n1)] = 1;
    for (int s = 0; s < h[4]; s++) p->node_slot_of_plane[h[5 + s]] = 0;
  }
  int *nr = p->node_rect;
  cover_arc(p->touched_a, n0, &nr[0], &nr[1]);
  cover_arc(p->touched_b, n1, &nr[2], &nr[3]);
  int ns = 0;
  for (int c = 0; c < n2; c++)
    if (p->node_slot_of_plane[c] == 0) {
      p->node_plane_of_slot[ns] = c;
      p->node_slot_of_plane[c] = ns++;
    }
  p->node_nslots = ns;
  const size_t npatch = (size_t) nr[1] * nr[3];
  if (!grow((void **) &p->node_planes, 3 * (size_t) ns * npatch, sizeof(double),
            &p->node_planes_cap))
    return aisci_set_error(AISCI_ERR_ALLOC,
                           "pppm_solve: out of memory for the node patch (%d planes of %d x %d)",
                           ns, nr[1], nr[3]);
  memset(p->node_planes, 0, sizeof(double) * ns * npatch);
  /* summed in node-rank order */
  for (int r = 0; r < S; r++) {
    const int *h = p->node_hdr + (size_t) r * H;
    const double *src = p->node_data + p->node_off[r];
    const int oa = wrap(h[0] - nr[0], n0), ob = wrap(h[2] - nr[2], n1);
    for (int s = 0; s < h[4]; s++) {
      double *dst = p->node_planes + (size_t) p->node_slot_of_plane[h[5 + s]] * npatch;
      for (int b = 0; b < h[3]; b++) {
        /* inside the node patch the rank's rows and columns are contiguous except when
         * the node patch is a whole period (then they may wrap at n) */
        add_run(dst + (size_t) wrap(ob + b, n1) * nr[1], oa, h[1], n0, src);
        src += h[1];
      }
    }
  }
  return AISCI_OK;
}

/* Node layout, solver: cut the node patch's field into the ranks' patches; its own into
 * p->planes, the others' sent with the reply (status, energy, virial, ad self-force).
 * With st != OK only the reply and an empty field message are sent. */
static aisci_status scatter_node(aisci_pppm *p, aisci_status st)
{
  const int S = p->node_size, H = HDR_INTS(p), n0 = p->n[0], n1 = p->n[1], nc = p->ncomp;
  const int *nr = p->node_rect;
  const size_t npatch = (size_t) nr[1] * nr[3];
  /* the reply is sent without waiting for each rank in turn: a rank still busy (its
   * network) must not hold up the fields of the others */
  double *reply = p->node_reply;
  reply[0] = (double) st;
  reply[1] = p->energy;
  memcpy(reply + 2, p->virial, sizeof(double) * 6);
  memcpy(reply + 8, p->sf_coef, sizeof(double) * 18);
  aisci_status out = st;
  int nreq = 0, rc = MPI_SUCCESS;
  for (int r = 0; r < S; r++) {
    const int *h = p->node_hdr + (size_t) r * H;
    const size_t patch = (size_t) h[1] * h[3];
    /* rank r's fields, [slot][component][b][a], into node_data (its charges are spent) */
    double *dst = r == 0 ? p->planes : p->node_data + nc * p->node_off[r], *d = dst;
    const int oa = wrap(h[0] - nr[0], n0), ob = wrap(h[2] - nr[2], n1);
    for (int s = 0; st == AISCI_OK && s < h[4]; s++) {
      const double *src = p->node_planes + (size_t) p->node_slot_of_plane[h[5 + s]] * nc * npatch;
      for (int c = 0; c < nc; c++, src += npatch)
        for (int b = 0; b < h[3]; b++) {
          copy_run(d, src + (size_t) wrap(ob + b, n1) * nr[1], oa, h[1], n0);
          d += h[1];
        }
    }
    if (r == 0) continue;
    const int cnt = st == AISCI_OK ? (int) (nc * h[4] * patch) : 0;
    if (rc == MPI_SUCCESS)
      rc = MPI_Isend(reply, 26, MPI_DOUBLE, r, TAG_REPLY, p->comm_node, &p->node_req[nreq++]);
    if (rc == MPI_SUCCESS)
      rc = MPI_Isend(dst, cnt, MPI_DOUBLE, r, TAG_FIELD, p->comm_node, &p->node_req[nreq++]);
  }
  if (MPI_Waitall(nreq, p->node_req, MPI_STATUSES_IGNORE) != MPI_SUCCESS || rc != MPI_SUCCESS)
    if (out == AISCI_OK)
      out = aisci_set_error(AISCI_ERR_MPI, "pppm_solve: sending a field patch failed");
  return out;
}

aisci_status aisci_pppm_hand_off(aisci_pppm *p)
{
  if (!p) return aisci_set_error(AISCI_ERR_ARG, "pppm_hand_off: pppm is NULL");
  if (p->state != PPPM_SPREAD)
    return aisci_set_error(AISCI_ERR_STATE, "pppm_hand_off: spread must come first");
  if (p->solver || p->handed) return AISCI_OK;
  const size_t patch = (size_t) p->rect[1] * p->rect[3];
  const int ns = p->nslots;
  memcpy(p->hdr_out, p->rect, sizeof(int) * 4);
  p->hdr_out[4] = ns;
  memcpy(p->hdr_out + 5, p->plane_of_slot, sizeof(int) * (size_t) ns);
  /* the receive buffer and the requests were sized in spread (agreed there), so nothing
   * here can fail short of MPI itself */
  const size_t cnt = ns * patch;
  int rc = MPI_Isend(p->hdr_out, HDR_INTS(p), MPI_INT, 0, TAG_HDR, p->comm_node, &p->req[0]);
  if (rc == MPI_SUCCESS)
    rc = MPI_Irecv(p->reply, 26, MPI_DOUBLE, 0, TAG_REPLY, p->comm_node, &p->req[1]);
  if (rc == MPI_SUCCESS)
    rc = MPI_Irecv(p->recvbuf, (int) (p->ncomp * cnt), MPI_DOUBLE, 0, TAG_FIELD, p->comm_node,
                   &p->req[2]);
  for (int k = 0; rc == MPI_SUCCESS && k < nchunks(cnt); k++) {
    const size_t off = (size_t) k * PPPM_CHUNK;
    rc = MPI_Isend(p->planes + off, (int) (cnt - off < PPPM_CHUNK ? cnt - off : PPPM_CHUNK),
                   MPI_DOUBLE, 0, TAG_CHARGE, p->comm_node, &p->req[3 + k]);
  }
  if (rc != MPI_SUCCESS)
    return aisci_set_error(AISCI_ERR_MPI, "pppm_hand_off: posting the patch messages failed");
  p->nreq = 3 + nchunks(cnt);
  p->handed = 1;
  return AISCI_OK;
}

aisci_status aisci_pppm_solve(aisci_pppm *p, double *energy, double virial[6])
{
  if (!p) return aisci_set_error(AISCI_ERR_ARG, "pppm_solve: pppm is NULL");
  if (p->state != PPPM_SPREAD)
    return aisci_set_error(AISCI_ERR_STATE, "pppm_solve: spread must come first");
  aisci_status st = AISCI_OK;
  if (p->layout == AISCI_PPPM_LAYOUT_RANK) {
    pppm_patch own = {p->rect, p->nslots, p->plane_of_slot, p->planes};
    st = solve_mesh(p, &own);
  } else if (p->solver) {
    st = gather_node(p);
    /* all solvers learn about a failed gather before their collectives */
    st = agree(p->comm_fft, st);
    if (st == AISCI_OK) {
      pppm_patch node = {p->node_rect, p->node_nslots, p->node_plane_of_slot, p->node_planes};
      st = solve_mesh(p, &node);
    }
    st = scatter_node(p, st);
  } else {
    st = aisci_pppm_hand_off(p);
    if (st == AISCI_OK) {
      int rc = MPI_Waitall(p->nreq, p->req, MPI_STATUSES_IGNORE);
      p->handed = 0;
      st = (aisci_status) (int) p->reply[0];
      if (st != AISCI_OK)
        st = aisci_set_error(st, "pppm_solve: the node's solver rank failed (%s)",
                             aisci_status_string(st));
      else if (rc != MPI_SUCCESS)
        st = aisci_set_error(AISCI_ERR_MPI, "pppm_solve: receiving the field patches failed");
      if (st == AISCI_OK) {
        /* the fields are this rank's planes now; the spent charges become the buffer */
        double *t = p->planes;
        size_t c = p->planes_cap;
        p->planes = p->recvbuf;
        p->planes_cap = p->recvbuf_cap;
        p->recvbuf = t;
        p->recvbuf_cap = c;
        p->energy = p->reply[1];
        memcpy(p->virial, p->reply + 2, sizeof(double) * 6);
        memcpy(p->sf_coef, p->reply + 8, sizeof(double) * 18);
      }
    }
  }
  if (st != AISCI_OK) {
    p->state = PPPM_IDLE;
    return st;
  }
  if (energy) *energy = p->energy;
  if (virial) memcpy(virial, p->virial, sizeof(double) * 6);
  p->state = PPPM_SOLVED;
  return AISCI_OK;
}

aisci_status aisci_pppm_interpolate(aisci_pppm *p, int n, const double *q, double *forces)
{
  if (!p) return aisci_set_error(AISCI_ERR_ARG, "pppm_interpolate: pppm is NULL");
  if (p->state != PPPM_SOLVED)
    return aisci_set_error(AISCI_ERR_STATE, "pppm_interpolate: solve must come first");
  aisci_status st = AISCI_OK;
  if (n != p->natoms_local)
    st = aisci_set_error(AISCI_ERR_STATE, "pppm_interpolate: %d atoms, but spread was given %d",
                         n, p->natoms_local);
  else if (n > 0 && (!q || !forces))
    st = aisci_set_error(AISCI_ERR_ARG, "pppm_interpolate: q and forces needed for n > 0");
  st = agree(p->comm_atoms, st);
  if (st != AISCI_OK) {
    p->state = PPPM_IDLE; /* the step is abandoned; the next spread starts afresh */
    return st;
  }
  const int P = p->order, n0 = p->n[0], n1 = p->n[1], n2 = p->n[2];
  p->state = PPPM_IDLE;

  /* solve has brought the field of my patches into p->planes; base[] holds offsets inside my patch (la x lb per plane and component) */
  const int la = p->rect[1];
  const size_t patch = (size_t) p->rect[1] * p->rect[3];
  const double scale = p->qqrd2e / p->volume;
  const int ws = p->wstride;
  for (int i = 0; i < n; i++) {
    const double *wa = &p->w[(size_t) i * ws], *wb = wa + P, *wc = wb + P;
    int ba = p->base[3 * i], bb = p->base[3 * i + 1], bc = p->base[3 * i + 2];
    /* offsets wrap only when the patch is a whole period (la = n0 or lb = n1) */
    int ia[AISCI_PPPM_MAX_ORDER];
    for (int k = 0; k < P; k++) ia[k] = wrap(ba + k, n0);
    if (!p->ad) {
      double e[3] = {0.0, 0.0, 0.0};
      for (int kc = 0; kc < P; kc++) {
        const double *pl = p->planes + 3 * (size_t) p->slot_of_plane[wrap(bc + kc, n2)] * patch;
        for (int kb = 0; kb < P; kb++) {
          size_t row = (size_t) wrap(bb + kb, n1) * la;
          double wcb = wc[kc] * wb[kb];
          for (int ka = 0; ka < P; ka++) {
            double ww = wcb * wa[ka];
            size_t o = row + ia[ka];
            e[0] += ww * pl[o];
            e[1] += ww * pl[patch + o];
            e[2] += ww * pl[2 * patch + o];
          }
        }
      }
      for (int d = 0; d < 3; d++) forces[3 * i + d] += scale * q[i] * e[d];
      continue;
    }
    /* ad: gradient of the interpolated potential in grid coordinates u_d,
     * F_alpha = -qqrd2e q sum_d n_d H^-1[alpha][d] d phi / d u_d */
    const double *da = wa + 3 * P, *db = da + P, *dc = db + P, *u = wa + 6 * P;
    double gu[3] = {0.0, 0.0, 0.0};
    for (int kc = 0; kc < P; kc++) {
      const double *pl = p->planes + (size_t) p->slot_of_plane[wrap(bc + kc, n2)] * patch;
      for (int kb = 0; kb < P; kb++) {
        size_t row = (size_t) wrap(bb + kb, n1) * la;
        double wcb = wc[kc] * wb[kb], wcdb = wc[kc] * db[kb], dcwb = dc[kc] * wb[kb];
        for (int ka = 0; ka < P; ka++) {
          double phi = pl[row + ia[ka]];
          gu[0] += wcb * da[ka] * phi;
          gu[1] += wcdb * wa[ka] * phi;
          gu[2] += dcwb * wa[ka] * phi;
        }
      }
    }
    for (int a = 0; a < 3; a++) {
      double f = 0.0;
      for (int d = 0; d < 3; d++) f -= p->n[d] * p->hinv[a][d] * gu[d];
      /* remove the mean self-force of the charge on itself (first two harmonics of its
       * position inside the mesh cell): F_self = -2 q^2 sum c sin(2 pi h u_d) */
      double fs = 0.0;
      for (int h = 0; h < 2; h++)
        for (int d = 0; d < 3; d++)
          fs += p->sf_coef[(h * 3 + d) * 3 + a] * sin(2.0 * M_PI * (h + 1) * u[d]);
      forces[3 * i + a] += scale * q[i] * f + 2.0 * p->qqrd2e * q[i] * q[i] * fs;
    }
  }
  return AISCI_OK;
}

aisci_status aisci_pppm_compute(aisci_pppm *p, int n, const double *x, const double *q,
                                const double box[3][3], double *energy, double *forces,
                                double virial[6])
{
  if (!p) return aisci_set_error(AISCI_ERR_ARG, "pppm_compute: pppm is NULL");
  aisci_status st = AISCI_OK;
  if (n > 0 && !forces)
    st = aisci_set_error(AISCI_ERR_ARG, "pppm_compute: forces is NULL");
  else if (box)
    st = aisci_pppm_set_box(p, box);
  st = agree(p->comm_atoms, st);
  if (st != AISCI_OK) return st;
  st = aisci_pppm_spread(p, n, x, q);
  if (st != AISCI_OK) return st;
  st = aisci_pppm_solve(p, energy, virial);
  if (st != AISCI_OK) return st;
  return aisci_pppm_interpolate(p, n, q, forces);
}

aisci_status aisci_pppm_self_energy(const aisci_pppm *p, double qsum, double q2sum,
                                    double *energy, double virial[6])
{
  if (!p) return aisci_set_error(AISCI_ERR_ARG, "pppm_self_energy: pppm is NULL");
  double ebg = -p->qqrd2e * M_PI * qsum * qsum / (2.0 * p->volume * p->g_eff * p->g_eff);
  if (energy) *energy = -p->qqrd2e * p->g_eff / sqrt(M_PI) * q2sum + ebg;
  if (virial) {
    /* E_bg ~ 1/V: -dE_bg/d(strain_aa) = E_bg */
    virial[0] = virial[1] = virial[2] = ebg;
    virial[3] = virial[4] = virial[5] = 0.0;
  }
  return AISCI_OK;
}

aisci_status aisci_pppm_real_pair(const aisci_pppm *p, double r, double *phi, double *fpair)
{
  if (!p) return aisci_set_error(AISCI_ERR_ARG, "pppm_real_pair: pppm is NULL");
  if (!(r > 0.0)) return aisci_set_error(AISCI_ERR_ARG, "pppm_real_pair: r must be > 0, got %g", r);
  const double two_over_sqrtpi = 2.0 / sqrt(M_PI);
  double e = 0.0, dedr = 0.0; /* e = phi / qqrd2e, dedr its r derivative */
  if (!isinf(p->g_ewald)) {
    double g = p->g_eff;
    e = erfc(g * r) / r;
    dedr = -e / r - two_over_sqrtpi * g * exp(-g * g * r * r) / r;
    if (p->beta > 0.0) {
      double b = p->beta, eb = erfc(b * r) / r;
      e -= eb;
      dedr -= -eb / r - two_over_sqrtpi * b * exp(-b * b * r * r) / r;
    }
  }
  if (phi) *phi = p->qqrd2e * e;
  if (fpair) *fpair = -p->qqrd2e * dedr / r;
  return AISCI_OK;
}
