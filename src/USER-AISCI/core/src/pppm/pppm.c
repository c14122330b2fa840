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
 * self-force coefficients; one data message).
 *
 * Files (pppm_internal.h): this one configures, creates and destroys the object and runs
 * the whole step; pppm_spread.c spreads and interpolates, pppm_solve.c solves,
 * pppm_node.c hands the patches of the node layout over, pppm_green.c holds the
 * influence function and the grid choice. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aisci_testing/pppm.h"
#include "pppm_internal.h"

aisci_pppm_config aisci_pppm_config_default(void)
{
  aisci_pppm_config cfg;
  memset(&cfg, 0, sizeof(cfg));
  cfg.box[0][0] = cfg.box[1][1] = cfg.box[2][2] = 1.0;
  cfg.accuracy = 1e-5;
  cfg.order = 5;
  cfg.diff = AISCI_PPPM_IK;
  cfg.qqrd2e = 1.0;
  return cfg;
}

aisci_status pppm_build_green(aisci_pppm *p, double *qlocal)
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
    return aisci_set_error(AISCI_ERR_ARG, "pppm: order must be 2..%d, got %d", AISCI_PPPM_MAX_ORDER,
                           c->order);
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
                             "the limit %d",
                             n[0], n[1], n[2], n[d], d, AISCI_PPPM_MAX_GRID);
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
        ? MPI_Comm_split(comm, world_rank / cfg->ranks_per_node, world_rank, &p->comm_node)
        : MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &p->comm_node);
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
    p->g_eff = isinf(p->g_ewald)
        ? cfg->beta
        : 1.0 / sqrt(1.0 / (p->g_ewald * p->g_ewald) + 1.0 / (cfg->beta * cfg->beta));
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
    st = pppm_choose_grid(hinv, volume, p->order, p->ad, p->g_eff, target, cfg->q2sum, cfg->natoms,
                          p->comm_atoms, p->n, &qsum);
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
  st = aisci_agree_status(p->comm_atoms, setup_buffers(p), "pppm");
  if (st == AISCI_OK && p->solver) st = setup_fft(p, cfg);
  st = aisci_agree_status(p->comm_atoms, st, "pppm");
  if (st != AISCI_OK) {
    aisci_pppm_destroy(p);
    return st;
  }

  double qlocal = 0.0;
  st = aisci_agree_status(p->comm_atoms,
                          p->solver ? pppm_build_green(p, auto_grid ? NULL : &qlocal) : AISCI_OK,
                          "pppm");
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
    p->node_hdr = malloc(sizeof(int) * (size_t) p->node_size * PPPM_HDR_INTS(p));
    p->node_off = malloc(sizeof(size_t) * ((size_t) p->node_size + 1));
    p->node_plane_of_slot = malloc(sizeof(int) * p->n[2]);
    p->node_slot_of_plane = malloc(sizeof(int) * p->n[2]);
    p->drain = malloc(sizeof(double) * PPPM_CHUNK);
    p->node_req = malloc(sizeof(MPI_Request) * 2 * (size_t) p->node_size);
    ok = ok && p->node_hdr && p->node_off && p->node_plane_of_slot && p->node_slot_of_plane &&
        p->drain && p->node_req;
  } else if (p->layout == AISCI_PPPM_LAYOUT_NODE) {
    p->hdr_out = malloc(sizeof(int) * PPPM_HDR_INTS(p));
    ok = ok && p->hdr_out;
  }
  return ok ? AISCI_OK : aisci_set_error(AISCI_ERR_ALLOC, "pppm_create: out of memory");
}

/* FFT layout, grids and plans: solver ranks only (collective on comm_fft). */
static aisci_status setup_fft(aisci_pppm *p, const aisci_pppm_config *cfg)
{
  aisci_status st;
  fftw_mpi_init();
  p->alloc_local = fftw_mpi_local_size_3d_transposed(
      p->n[2], p->n[1], p->nh, p->comm_fft, &p->local_nc, &p->local_c0, &p->local_nb, &p->local_b0);
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
  st = aisci_agree_status(
      p->comm_fft,
      ok ? AISCI_OK : aisci_set_error(AISCI_ERR_ALLOC, "pppm_create: out of memory for grids"),
      "pppm");
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
  st = aisci_agree_status(
      p->comm_fft, both ? AISCI_OK : aisci_set_error(AISCI_ERR_ALLOC, "pppm_create: out of memory"),
      "pppm");
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
      : aisci_set_error(AISCI_ERR_FFT,
                        "pppm_create: FFTW could not plan a %d x %d x %d "
                        "transform",
                        p->n[0], p->n[1], p->n[2]);
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
  return p->solver ? pppm_build_green(p, NULL) : AISCI_OK;
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
  st = aisci_agree_status(p->comm_atoms, st, "pppm");
  if (st != AISCI_OK) return st;
  st = aisci_pppm_spread(p, n, x, q);
  if (st != AISCI_OK) return st;
  st = aisci_pppm_solve(p, energy, virial);
  if (st != AISCI_OK) return st;
  return aisci_pppm_interpolate(p, n, q, forces);
}

aisci_status aisci_pppm_self_energy(const aisci_pppm *p, double qsum, double q2sum, double *energy,
                                    double virial[6])
{
  if (!p) return aisci_set_error(AISCI_ERR_ARG, "pppm_self_energy: pppm is NULL");
  double ebg = -p->qqrd2e * AISCI_PI * qsum * qsum / (2.0 * p->volume * p->g_eff * p->g_eff);
  if (energy) *energy = -p->qqrd2e * p->g_eff / sqrt(AISCI_PI) * q2sum + ebg;
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
  const double two_over_sqrtpi = 2.0 / sqrt(AISCI_PI);
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
