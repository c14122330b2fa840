/* One ring-polymer MD time step over a partition's K local beads: the splitting named in
 * the configuration, centre-of-mass removal, cell steps, forces on the modes and the
 * output vector. See include/aisci/pimd_step.h. The kernels are those of pimd.c; rows
 * with a stride other than 3 are copied into contiguous scratch around each kernel. */
#include "aisci/pimd_step.h"
#include "aisci_testing/beadcomm.h"
#include "aisci_testing/pimd.h"

#include "internal.h"
#include "pimd_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SCR_Q, SCR_V, SCR_F, SCR_X, NSCRATCH };

struct aisci_pimd_step {
  const aisci_pimd *pimd;
  int K, first, fixcom, nbeads, rank;
  MPI_Comm world, universe;
  aisci_beadcomm *bc;
  double *xf, *xcf;          /* K virial sums of the last forces */
  double spring;             /* spring energy of the local bead (method pimd) */
  double *scratch[NSCRATCH]; /* contiguous copies of strided rows */
  int64_t cap[NSCRATCH];
  double *sums;                    /* 6 P + 1 values of the output's universe sum (x2) */
  aisci_pimd_bead_sums *bead_sums; /* P per-bead sums of the output */
};

static const aisci_pimd_config *config(const aisci_pimd_step *s)
{
  return aisci_pimd_get_config(s->pimd);
}

static int barostat_on(const aisci_pimd_step *s)
{
  return config(s)->ensemble >= AISCI_PIMD_NPH;
}

aisci_status aisci_pimd_step_create(const aisci_pimd *pimd, int K, int first, int fixcom,
                                    MPI_Comm world, MPI_Comm universe, aisci_beadcomm *bc,
                                    aisci_pimd_step **out)
{
  if (!out) return aisci_set_error(AISCI_ERR_ARG, "pimd_step_create: output pointer is NULL");
  *out = NULL;
  if (!pimd || !bc)
    return aisci_set_error(AISCI_ERR_ARG, "pimd_step_create: %s is NULL",
                           !pimd ? "integrator" : "bead exchange");
  const aisci_pimd_config *cfg = aisci_pimd_get_config(pimd);
  const int P = cfg->nbeads;
  if (K < 1 || first < 0 || first + K > P)
    return aisci_set_error(AISCI_ERR_ARG,
                           "pimd_step_create: local beads %d..%d outside the %d beads", first,
                           first + K - 1, P);
  if (K > 1 && cfg->method != AISCI_PIMD_NMPIMD)
    return aisci_set_error(AISCI_ERR_ARG,
                           "pimd_step_create: %d beads per partition need method nmpimd", K);
  aisci_pimd_step *s = calloc(1, sizeof(*s));
  if (!s) return aisci_set_error(AISCI_ERR_ALLOC, "pimd_step_create: out of memory");
  s->pimd = pimd;
  s->K = K;
  s->first = first;
  s->fixcom = fixcom != 0;
  s->nbeads = P;
  s->world = world;
  s->universe = universe;
  s->bc = bc;
  s->xf = calloc((size_t) K, sizeof(double));
  s->xcf = calloc((size_t) K, sizeof(double));
  s->sums = calloc(2 * (6 * (size_t) P + 1), sizeof(double));
  s->bead_sums = calloc((size_t) P, sizeof(aisci_pimd_bead_sums));
  aisci_status st =
      aisci_mpi_fail(MPI_Comm_rank(world, &s->rank), "pimd_step_create", "MPI_Comm_rank");
  if (st == AISCI_OK && (!s->xf || !s->xcf || !s->sums || !s->bead_sums))
    st = aisci_set_error(AISCI_ERR_ALLOC, "pimd_step_create: out of memory for %d beads", P);
  if (st != AISCI_OK) {
    aisci_pimd_step_destroy(s);
    return st;
  }
  *out = s;
  return AISCI_OK;
}

void aisci_pimd_step_destroy(aisci_pimd_step *s)
{
  if (!s) return;
  for (int i = 0; i < NSCRATCH; i++) free(s->scratch[i]);
  free(s->xf);
  free(s->xcf);
  free(s->sums);
  free(s->bead_sums);
  free(s);
}

aisci_status aisci_pimd_output_layout(const aisci_pimd_config *cfg, int *nvalues,
                                      int extensive[AISCI_PIMD_MAXVALUES])
{
  if (!cfg || !nvalues || !extensive)
    return aisci_set_error(AISCI_ERR_ARG, "pimd_output_layout: NULL argument");
  int nv = AISCI_PIMD_NVALUES, nrates = 0;
  if (cfg->ensemble >= AISCI_PIMD_NPH) {
    nrates = cfg->pstyle == AISCI_PIMD_ISO ? 1 : 3;
    nv += nrates + 4;
  }
  /* [0-6] energies and kinetic estimators, [7-9] pressures, then the strain rates and the
   * four cell energies */
  for (int i = 0; i < AISCI_PIMD_MAXVALUES; i++)
    extensive[i] = i < AISCI_PIMD_NVALUES ? i < 7 : i >= AISCI_PIMD_NVALUES + nrates;
  *nvalues = nv;
  return AISCI_OK;
}

/* ------------------------------------------------------------------ strided rows */

/* Row i of r (its index list applied). */
static double *row(aisci_pimd_rows r, int i)
{
  return r.data + (size_t) (r.index ? r.index[i] : i) * r.stride;
}

/* A contiguous n x 3 view of rows r: the rows themselves when the stride is 3 and there is
 * no index list, else scratch buffer `which`, filled from the rows when `load`. */
static aisci_status view(aisci_pimd_step *s, int which, aisci_pimd_rows r, int n, int load,
                         double **out)
{
  if ((r.stride == 3 && !r.index) || n == 0) {
    *out = r.data;
    return AISCI_OK;
  }
  if (r.stride < 3 || !r.data)
    return aisci_set_error(AISCI_ERR_ARG, "pimd_step: rows with stride %d (need >= 3) or NULL data",
                           r.stride);
  aisci_status st = aisci_grow((void **) &s->scratch[which], &s->cap[which], 3 * (int64_t) n,
                               sizeof(double), "pimd_step", "scratch rows");
  if (st != AISCI_OK) return st;
  double *c = s->scratch[which];
  if (load)
    for (int i = 0; i < n; i++) memcpy(c + 3 * (size_t) i, row(r, i), 3 * sizeof(double));
  *out = c;
  return AISCI_OK;
}

/* Copy a view made by view() back into its rows (nothing to do when it is the rows). */
static void store(aisci_pimd_rows r, int n, const double *c)
{
  if (c == r.data) return;
  for (int i = 0; i < n; i++) memcpy(row(r, i), c + 3 * (size_t) i, 3 * sizeof(double));
}

static aisci_status check_local(const aisci_pimd_step *s, const aisci_pimd_local *l,
                                const void *state, const char *who)
{
  if (!s || !l || !state) return aisci_set_error(AISCI_ERR_ARG, "%s: NULL argument", who);
  if (l->n < 0) return aisci_set_error(AISCI_ERR_ARG, "%s: negative atom count %d", who, l->n);
  if (l->n > 0 && (!l->mass || !l->tags || !l->q || !l->v || !l->f))
    return aisci_set_error(AISCI_ERR_ARG, "%s: NULL masses, tags or rows", who);
  return AISCI_OK;
}

/* ------------------------------------------------------------------ splitting steps */

/* The centroid's centre-of-mass velocity is removed from mode 0 (nmpimd, the partition
 * holding it) or from the bead's velocities (pimd; the centroid momentum is the sum over
 * beads). */
static aisci_status remove_com(aisci_pimd_step *s, const aisci_pimd_local *l)
{
  const int cartesian = config(s)->method == AISCI_PIMD_CARTESIAN;
  if (!cartesian && s->first != 0) return AISCI_OK;
  const int n = l->n;
  double local[4] = {0, 0, 0, 0}, sum[4];
  for (int i = 0; i < n; i++) {
    const double *v = row(l->v[0], i);
    for (int d = 0; d < 3; d++) local[d] += l->mass[i] * v[d];
    local[3] += l->mass[i];
  }
  aisci_status st = aisci_mpi_fail(MPI_Allreduce(local, sum, 4, MPI_DOUBLE, MPI_SUM, s->world),
                                   "pimd_step", "centre-of-mass Allreduce");
  if (st != AISCI_OK) return st;
  if (cartesian) {
    double u[4];
    st = aisci_mpi_fail(MPI_Allreduce(sum, u, 4, MPI_DOUBLE, MPI_SUM, s->universe), "pimd_step",
                        "centre-of-mass Allreduce");
    if (st != AISCI_OK) return st;
    for (int d = 0; d < 4; d++) sum[d] = u[d];
  }
  for (int d = 0; d < 3; d++) sum[d] /= sum[3];
  for (int i = 0; i < n; i++) {
    double *v = row(l->v[0], i);
    for (int d = 0; d < 3; d++) v[d] -= sum[d];
  }
  return AISCI_OK;
}

/* O: cell noise (NPT), PILE-L on every local mode, then the COM removal. */
static aisci_status o_step(aisci_pimd_step *s, const aisci_pimd_local *l, aisci_pimd_state *state,
                           double h)
{
  const aisci_pimd_config *cfg = config(s);
  aisci_status st = AISCI_OK;
  if (barostat_on(s)) {
    st = aisci_pimd_cell_o_step(s->pimd, &state->cell, h, state->noise_counter);
    if (st != AISCI_OK) return st;
  }
  if (cfg->ensemble != AISCI_PIMD_NVT && cfg->ensemble != AISCI_PIMD_NPT) return AISCI_OK;
  for (int k = 0; k < s->K; k++) {
    double *v = NULL;
    st = view(s, SCR_V, l->v[k], l->n, 1, &v);
    if (st == AISCI_OK)
      st = aisci_pimd_o_step(s->pimd, s->first + k, l->n, l->tags, l->mass, v, h,
                             state->noise_counter);
    if (st != AISCI_OK) return st;
    store(l->v[k], l->n, v);
  }
  state->noise_counter++;
  return s->fixcom ? remove_com(s, l) : AISCI_OK;
}

static aisci_status b_step(aisci_pimd_step *s, const aisci_pimd_local *l, double h)
{
  for (int k = 0; k < s->K; k++) {
    double *f = NULL, *v = NULL;
    aisci_status st = view(s, SCR_F, l->f[k], l->n, 1, &f);
    if (st == AISCI_OK) st = view(s, SCR_V, l->v[k], l->n, 1, &v);
    if (st == AISCI_OK) st = aisci_pimd_b_step(s->pimd, s->first + k, l->n, l->mass, f, v, h);
    if (st != AISCI_OK) return st;
    store(l->v[k], l->n, v);
  }
  return AISCI_OK;
}

/* A: free ring-polymer propagation of each local mode; with a barostat the centroid
 * moves with the cell and the box scales by exp(alpha h). */
static aisci_status a_step(aisci_pimd_step *s, const aisci_pimd_local *l, aisci_pimd_state *state,
                           double h, aisci_pimd_box_scaling *box)
{
  aisci_status st = AISCI_OK;
  double alpha[3] = {0.0, 0.0, 0.0};
  const int baro = barostat_on(s);
  if (baro) {
    st = aisci_pimd_cell_rates(s->pimd, &state->cell, alpha);
    if (st != AISCI_OK) return st;
  }
  for (int k = 0; k < s->K; k++) {
    double *q = NULL, *v = NULL;
    st = view(s, SCR_Q, l->q[k], l->n, 1, &q);
    if (st == AISCI_OK) st = view(s, SCR_V, l->v[k], l->n, 1, &v);
    if (st != AISCI_OK) return st;
    if (baro && s->first + k == 0)
      st = aisci_pimd_cell_a_centroid(s->pimd, alpha, l->n, q, v, h);
    else
      st = aisci_pimd_a_step(s->pimd, s->first + k, l->n, q, v, h);
    if (st != AISCI_OK) return st;
    store(l->q[k], l->n, q);
    store(l->v[k], l->n, v);
  }
  if (baro) {
    for (int d = 0; d < 3; d++) box->factor[box->count][d] = exp(alpha[d] * h);
    box->count++;
  }
  return AISCI_OK;
}

/* Cell kick: universe sums of the centroid kinetic tensor (mode 0) and of the centroid
 * virial of all beads (from the last forces), then p += h * force. */
static aisci_status cell_kick(aisci_pimd_step *s, const aisci_pimd_local *l,
                              aisci_pimd_state *state, double volume, double h)
{
  double local[6] = {0, 0, 0, state->cell_virial[0], state->cell_virial[1], state->cell_virial[2]};
  double sum[6], force[3];
  aisci_status st = AISCI_OK;
  if (s->first == 0) {
    double *v = NULL;
    st = view(s, SCR_V, l->v[0], l->n, 1, &v);
    if (st == AISCI_OK) st = aisci_pimd_kinetic_tensor(s->pimd, 0, l->n, l->mass, v, local);
    if (st != AISCI_OK) return st;
  }
  st = aisci_beadcomm_sum_universe(s->bc, 6, local, sum);
  if (st == AISCI_OK) st = aisci_pimd_cell_force(s->pimd, sum, sum + 3, volume, force);
  if (st == AISCI_OK) st = aisci_pimd_cell_b_step(s->pimd, &state->cell, force, h);
  return st;
}

aisci_status aisci_pimd_step_begin(aisci_pimd_step *s, const aisci_pimd_local *l,
                                   aisci_pimd_state *state, double volume,
                                   aisci_pimd_box_scaling *box)
{
  aisci_status st = check_local(s, l, state, "pimd_step_begin");
  if (st != AISCI_OK) return st;
  if (!box) return aisci_set_error(AISCI_ERR_ARG, "pimd_step_begin: NULL box scaling");
  box->count = 0;
  const aisci_pimd_config *cfg = config(s);
  const double dt = cfg->dt;
  const int baro = barostat_on(s);
  /* method pimd (Cartesian beads) runs the same steps: A is a drift, no cell */
  if (cfg->integrator == AISCI_PIMD_OBABO) {
    st = o_step(s, l, state, 0.5 * dt);
    if (st == AISCI_OK && baro) st = cell_kick(s, l, state, volume, 0.5 * dt);
    if (st == AISCI_OK) st = b_step(s, l, 0.5 * dt);
    if (st == AISCI_OK) st = a_step(s, l, state, dt, box);
  } else {
    if (baro) st = cell_kick(s, l, state, volume, 0.5 * dt);
    if (st == AISCI_OK) st = b_step(s, l, 0.5 * dt);
    if (st == AISCI_OK) st = a_step(s, l, state, 0.5 * dt, box);
    if (st == AISCI_OK) st = o_step(s, l, state, dt);
    if (st == AISCI_OK) st = a_step(s, l, state, 0.5 * dt, box);
  }
  return st;
}

aisci_status aisci_pimd_step_end(aisci_pimd_step *s, const aisci_pimd_local *l,
                                 aisci_pimd_state *state, double volume)
{
  aisci_status st = check_local(s, l, state, "pimd_step_end");
  if (st != AISCI_OK) return st;
  const aisci_pimd_config *cfg = config(s);
  st = b_step(s, l, 0.5 * cfg->dt);
  if (st == AISCI_OK && barostat_on(s)) st = cell_kick(s, l, state, volume, 0.5 * cfg->dt);
  if (st == AISCI_OK && cfg->integrator == AISCI_PIMD_OBABO)
    st = o_step(s, l, state, 0.5 * cfg->dt);
  return st;
}

/* ------------------------------------------------------------------ positions, forces */

static void write_centroids(const aisci_pimd_step *s, int n, const double *mode0, aisci_pimd_rows c)
{
  if (!c.data) return;
  const double f = 1.0 / sqrt((double) s->nbeads);
  for (int i = 0; i < n; i++) {
    double *ci = row(c, i);
    for (int d = 0; d < 3; d++) ci[d] = f * mode0[3 * i + d];
  }
}

aisci_status aisci_pimd_step_positions(aisci_pimd_step *s, int n, const double *modes,
                                       const aisci_pimd_rows *beads, aisci_pimd_rows centroid)
{
  if (!s || n < 0 || (n > 0 && (!modes || !beads)))
    return aisci_set_error(AISCI_ERR_ARG, "pimd_step_positions: NULL argument or n %d < 0", n);
  if (config(s)->method != AISCI_PIMD_NMPIMD)
    return aisci_set_error(AISCI_ERR_STATE, "pimd_step_positions: method pimd has no normal modes");
  if (n == 0) return AISCI_OK;
  for (int k = 0; k < s->K; k++) {
    double *x = NULL;
    if (!beads[k].data) continue;
    aisci_status st = view(s, SCR_X, beads[k], n, 0, &x);
    if (st == AISCI_OK) st = aisci_pimd_to_bead(s->pimd, s->first + k, n, modes, x);
    if (st != AISCI_OK) return st;
    store(beads[k], n, x);
  }
  write_centroids(s, n, modes, centroid);
  return AISCI_OK;
}

static aisci_status mode_forces(aisci_pimd_step *s, const aisci_pimd_local *l,
                                aisci_pimd_state *state, const double *beads,
                                const aisci_pimd_bead_measure *measured, int measure,
                                double *per_atom)
{
  const int n = l->n, baro = barostat_on(s);
  double wsum[3] = {0.0, 0.0, 0.0};
  if (measure && per_atom)
    for (int i = 0; i < n; i++) per_atom[i] = 0.0;
  for (int k = 0; k < s->K; k++) {
    double *fm = NULL, *q = NULL;
    aisci_status st = view(s, SCR_F, l->f[k], n, 0, &fm);
    if (st == AISCI_OK) st = aisci_pimd_to_mode(s->pimd, s->first + k, n, beads, fm);
    if (st != AISCI_OK) return st;
    store(l->f[k], n, fm);
    if (!baro && !measure) continue;
    double x = 0.0;
    st = view(s, SCR_Q, l->q[k], n, 1, &q);
    if (st == AISCI_OK)
      st = aisci_pimd_mode_virial(s->pimd, s->first + k, n, q, fm, measure ? per_atom : NULL, wsum,
                                  &x);
    if (st != AISCI_OK) return st;
    s->xf[k] = x;
    s->xcf[k] = s->first + k > 0 ? x : 0.0;
  }
  if (baro) {
    /* centroid virial per direction: W_dd of the local beads (counted on the partition's
     * rank 0) - sum_k>=1 q_k . f_k */
    if (s->rank == 0 && !measured)
      return aisci_set_error(AISCI_ERR_ARG,
                             "pimd_step_forces: a barostat needs the beads' virials");
    for (int d = 0; d < 3; d++) {
      double wb = 0.0;
      if (s->rank == 0)
        for (int k = 0; k < s->K; k++) wb += measured[k].virial[d];
      state->cell_virial[d] = wsum[d] + wb;
    }
  }
  return AISCI_OK;
}

aisci_status aisci_pimd_step_forces(aisci_pimd_step *s, const aisci_pimd_local *l,
                                    aisci_pimd_state *state, const double *bead_forces,
                                    const double *bead_positions,
                                    const aisci_pimd_bead_measure *measured, int measure,
                                    double *per_atom, aisci_pimd_rows centroid)
{
  aisci_status st = check_local(s, l, state, "pimd_step_forces");
  if (st != AISCI_OK) return st;
  const int n = l->n;
  if (config(s)->method == AISCI_PIMD_NMPIMD) {
    if (n > 0 && !bead_forces)
      return aisci_set_error(AISCI_ERR_ARG, "pimd_step_forces: NULL bead forces");
    return mode_forces(s, l, state, bead_forces, measured, measure, per_atom);
  }
  /* Cartesian bead: centroids, the virial sums with the physical forces, then the springs */
  if (n > 0 && !bead_positions)
    return aisci_set_error(AISCI_ERR_ARG, "pimd_step_forces: NULL bead positions");
  double *xc = NULL;
  if (n > 0) {
    st = aisci_grow((void **) &s->scratch[SCR_X], &s->cap[SCR_X], 3 * (int64_t) n, sizeof(double),
                    "pimd_step", "centroids");
    if (st != AISCI_OK) return st;
    xc = s->scratch[SCR_X];
    st = aisci_pimd_to_mode(s->pimd, 0, n, bead_positions, xc);
    if (st != AISCI_OK) return st;
    write_centroids(s, n, xc, centroid);
  }
  double *f = NULL;
  st = view(s, SCR_F, l->f[0], n, 1, &f);
  if (st != AISCI_OK) return st;
  if (measure) {
    st = aisci_pimd_bead_virial(s->pimd, n,
                                n > 0 ? bead_positions + (size_t) s->first * 3 * n : NULL, xc, f,
                                per_atom, &s->xf[0], &s->xcf[0]);
    if (st != AISCI_OK) return st;
  }
  st = aisci_pimd_spring_bead(s->pimd, s->first, n, l->mass, bead_positions, f, &s->spring);
  if (st == AISCI_OK) store(l->f[0], n, f);
  return st;
}

/* ------------------------------------------------------------------ output vector */

aisci_status aisci_pimd_step_output(aisci_pimd_step *s, const aisci_pimd_local *l,
                                    const aisci_pimd_state *state,
                                    const aisci_pimd_bead_measure *measured,
                                    const double *bead_velocities, double natoms, double volume,
                                    double nktv2p, double *out)
{
  aisci_status st = check_local(s, l, state, "pimd_step_output");
  if (st != AISCI_OK) return st;
  if (!out || (s->rank == 0 && !measured))
    return aisci_set_error(AISCI_ERR_ARG, "pimd_step_output: NULL %s",
                           !out ? "output" : "measured values");
  const aisci_pimd_config *cfg = config(s);
  const int n = l->n, P = s->nbeads, NQ = 6;
  const int cartesian = cfg->method == AISCI_PIMD_CARTESIAN;
  if (cartesian && n > 0 && !bead_velocities)
    return aisci_set_error(AISCI_ERR_ARG,
                           "pimd_step_output: method pimd needs the bead velocities");
  double *local = s->sums, *total = s->sums + NQ * (size_t) P + 1;
  memset(local, 0, sizeof(double) * (NQ * (size_t) P + 1));
  for (int k = 0; k < s->K; k++) {
    double *t = local + (size_t) NQ * (s->first + k), *v, *q;
    st = view(s, SCR_V, l->v[k], n, 1, &v);
    if (st == AISCI_OK) st = aisci_pimd_kinetic(s->pimd, s->first + k, n, l->mass, v, &t[0]);
    if (st != AISCI_OK) return st;
    if (cartesian) {
      t[1] = s->spring;
    } else {
      st = view(s, SCR_Q, l->q[k], n, 1, &q);
      if (st == AISCI_OK) st = aisci_pimd_spring_mode(s->pimd, s->first + k, n, l->mass, q, &t[1]);
      if (st != AISCI_OK) return st;
    }
    t[3] = s->xf[k];
    t[4] = s->xcf[k];
    /* potential energy and virial are partition totals: counted once, on its rank 0 */
    if (s->rank == 0) {
      t[2] = measured[k].potential;
      t[5] = measured[k].virial[0] + measured[k].virial[1] + measured[k].virial[2];
    }
  }
  /* physical kinetic energy of the centroids: from mode 0 (nmpimd) or the bead mean (pimd) */
  double kcen = 0.0;
  if (s->first == 0 && n > 0) {
    double sum = 0.0;
    if (!cartesian) {
      double *v = NULL;
      st = view(s, SCR_V, l->v[0], n, 1, &v);
      if (st != AISCI_OK) return st;
      sum = aisci_pimd_mass_square(n, l->mass, v);
    } else {
      st = aisci_grow((void **) &s->scratch[SCR_X], &s->cap[SCR_X], 3 * (int64_t) n, sizeof(double),
                      "pimd_step", "centroid velocities");
      if (st == AISCI_OK)
        st = aisci_pimd_to_mode(s->pimd, 0, n, bead_velocities, s->scratch[SCR_X]);
      if (st != AISCI_OK) return st;
      const double *vc = s->scratch[SCR_X];
      for (int i = 0; i < 3 * n; i++) sum += l->mass[i / 3] * vc[i] * vc[i];
    }
    kcen = 0.5 * cfg->mvv2e * sum / P;
  }
  local[(size_t) NQ * P] = kcen;
  st = aisci_beadcomm_sum_universe(s->bc, NQ * P + 1, local, total);
  if (st != AISCI_OK) return st;
  aisci_pimd_bead_sums *sums = s->bead_sums;
  for (int b = 0; b < P; b++) {
    const double *t = total + (size_t) NQ * b;
    sums[b].kinetic = t[0];
    sums[b].spring = t[1];
    sums[b].potential = t[2];
    sums[b].xf = t[3];
    sums[b].xcf = t[4];
    sums[b].virial = t[5];
  }
  st = aisci_pimd_estimators(s->pimd, s->first, sums, natoms, total[(size_t) NQ * P], volume,
                             nktv2p, out);
  /* entries 0-2 of a partition with several beads: sums over its beads */
  for (int k = 1; k < s->K && st == AISCI_OK; k++) {
    out[0] += sums[s->first + k].kinetic;
    out[1] += sums[s->first + k].spring;
    out[2] += sums[s->first + k].potential;
  }
  if (st != AISCI_OK || !barostat_on(s)) return st;
  /* strain rate(s), cell kinetic, potential and Jacobian energies, and the conserved
   * quantity of the extended ring polymer */
  double alpha[3], e[3];
  st = aisci_pimd_cell_rates(s->pimd, &state->cell, alpha);
  if (st == AISCI_OK) st = aisci_pimd_cell_energies(s->pimd, &state->cell, volume, e);
  if (st != AISCI_OK) return st;
  int m = AISCI_PIMD_NVALUES;
  if (cfg->pstyle == AISCI_PIMD_ISO)
    out[m++] = alpha[0];
  else
    for (int d = 0; d < 3; d++) out[m++] = alpha[d];
  out[m++] = e[0];
  out[m++] = e[1];
  out[m++] = e[2];
  out[m++] = out[3] + e[0] + e[1] + e[2];
  return AISCI_OK;
}
