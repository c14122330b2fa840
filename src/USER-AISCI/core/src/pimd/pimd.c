/* Ring-polymer MD core: normal modes, splitting steps (B, A, O) and estimators.
 * See include/aisci/pimd.h for the conventions. */
#include "aisci_testing/pimd.h"

#include "aisci_testing/rng.h"

#include "internal.h"
#include "pimd_internal.h"

#include <math.h>
#include <stdlib.h>

struct aisci_pimd {
  aisci_pimd_config cfg;
  double *C;        /* P x P normal-mode matrix */
  double *lambda;   /* P spring eigenvalues */
  double *mass_fac; /* P fictitious mass / physical mass */
  double *omega;    /* P free-polymer frequencies */
  double *gamma;    /* P PILE-L frictions */
  double omega_p;
};

aisci_pimd_config aisci_pimd_config_default(void)
{
  aisci_pimd_config c;
  c.nbeads = 1;
  c.method = AISCI_PIMD_NMPIMD;
  c.integrator = AISCI_PIMD_OBABO;
  c.ensemble = AISCI_PIMD_NVT;
  c.fmmode = AISCI_PIMD_FM_PHYSICAL;
  c.fmass = 1.0;
  c.scale = 1.0;
  c.kT = 1.0;
  c.hbar = 1.0;
  c.dt = 1.0;
  c.tau = 1.0;
  c.seed = 1;
  c.mvv2e = 1.0;
  c.ftm2v = 1.0;
  c.barostat = AISCI_PIMD_BZP;
  c.pstyle = AISCI_PIMD_ISO;
  c.pext = 0.0;
  c.taup = 1.0;
  c.natoms = 1.0;
  return c;
}

static double ring_eigenvalue(int nbeads, int k)
{
  double s = sin(AISCI_PI * (double) k / (double) nbeads);
  return 4.0 * s * s;
}

aisci_status aisci_pimd_lambda(int nbeads, int k, double *lambda)
{
  if (nbeads < 1 || k < 0 || k >= nbeads || !lambda)
    return aisci_set_error(AISCI_ERR_ARG,
                           "pimd_lambda: need P >= 1, 0 <= k < P and an output, got P = %d, k = %d",
                           nbeads, k);
  *lambda = ring_eigenvalue(nbeads, k);
  return AISCI_OK;
}

aisci_status aisci_pimd_nm_matrix(int P, double *C)
{
  if (P < 1 || !C)
    return aisci_set_error(AISCI_ERR_ARG, "nm_matrix: need P >= 1 and an output array, got P = %d",
                           P);
  const double r1 = sqrt(1.0 / P), r2 = sqrt(2.0 / P);
  for (int j = 0; j < P; j++) {
    for (int k = 0; k < P; k++) {
      double v;
      double arg = 2.0 * AISCI_PI * (double) j * (double) k / (double) P;
      if (k == 0)
        v = r1;
      else if (2 * k < P)
        v = r2 * cos(arg);
      else if (2 * k == P)
        v = r1 * ((j % 2) ? -1.0 : 1.0);
      else
        v = r2 * sin(arg);
      C[j * P + k] = v;
    }
  }
  return AISCI_OK;
}

static int positive(double x)
{
  return x > 0 && isfinite(x);
}

aisci_status aisci_pimd_create(const aisci_pimd_config *cfg, aisci_pimd **out)
{
  if (!out) return aisci_set_error(AISCI_ERR_ARG, "pimd_create: output pointer is NULL");
  *out = NULL;
  if (!cfg) return aisci_set_error(AISCI_ERR_ARG, "pimd_create: config is NULL");
  if (cfg->nbeads < 1)
    return aisci_set_error(AISCI_ERR_ARG, "number of beads must be >= 1, got %d", cfg->nbeads);
  if ((unsigned) cfg->method > AISCI_PIMD_CARTESIAN)
    return aisci_set_error(AISCI_ERR_ARG, "unknown method %d", (int) cfg->method);
  if ((unsigned) cfg->integrator > AISCI_PIMD_BAOAB)
    return aisci_set_error(AISCI_ERR_ARG, "unknown integrator %d", (int) cfg->integrator);
  if ((unsigned) cfg->ensemble > AISCI_PIMD_NPT)
    return aisci_set_error(AISCI_ERR_ARG, "unknown ensemble %d", (int) cfg->ensemble);
  if (cfg->ensemble >= AISCI_PIMD_NPH) {
    if ((unsigned) cfg->barostat > AISCI_PIMD_MTTK)
      return aisci_set_error(AISCI_ERR_ARG, "unknown barostat %d", (int) cfg->barostat);
    if ((unsigned) cfg->pstyle > AISCI_PIMD_ANISO)
      return aisci_set_error(AISCI_ERR_ARG, "unknown pressure style pstyle %d", (int) cfg->pstyle);
    if (!positive(cfg->taup))
      return aisci_set_error(AISCI_ERR_ARG, "taup must be > 0, got %g", cfg->taup);
    if (!(cfg->natoms >= 1) || !isfinite(cfg->natoms))
      return aisci_set_error(AISCI_ERR_ARG, "the number of atoms natoms must be >= 1, got %g",
                             cfg->natoms);
    if (!isfinite(cfg->pext))
      return aisci_set_error(AISCI_ERR_ARG, "external pressure pext must be finite, got %g",
                             cfg->pext);
    if (cfg->method != AISCI_PIMD_NMPIMD)
      return aisci_set_error(AISCI_ERR_ARG, "constant-pressure ensembles need method nmpimd");
  }
  if ((unsigned) cfg->fmmode > AISCI_PIMD_FM_NORMAL)
    return aisci_set_error(AISCI_ERR_ARG, "unknown fmmode %d", (int) cfg->fmmode);
  /* positive and finite: an infinite kT or dt would silently give NaN coefficients */
  if (!positive(cfg->fmass))
    return aisci_set_error(AISCI_ERR_ARG, "fmass must be > 0, got %g", cfg->fmass);
  if (!positive(cfg->scale))
    return aisci_set_error(AISCI_ERR_ARG, "scale must be > 0, got %g", cfg->scale);
  if (!positive(cfg->kT)) return aisci_set_error(AISCI_ERR_ARG, "kT must be > 0, got %g", cfg->kT);
  if (!positive(cfg->hbar))
    return aisci_set_error(AISCI_ERR_ARG, "hbar must be > 0, got %g", cfg->hbar);
  if (!positive(cfg->dt))
    return aisci_set_error(AISCI_ERR_ARG, "time step dt must be > 0, got %g", cfg->dt);
  if (!positive(cfg->tau))
    return aisci_set_error(AISCI_ERR_ARG, "tau must be > 0, got %g", cfg->tau);
  if (!positive(cfg->mvv2e))
    return aisci_set_error(AISCI_ERR_ARG, "unit factor mvv2e must be > 0, got %g", cfg->mvv2e);
  if (!positive(cfg->ftm2v))
    return aisci_set_error(AISCI_ERR_ARG, "unit factor ftm2v must be > 0, got %g", cfg->ftm2v);
  if (cfg->seed == 0) return aisci_set_error(AISCI_ERR_ARG, "thermostat seed must be > 0");

  aisci_pimd *p = calloc(1, sizeof(*p));
  const int P = cfg->nbeads;
  if (!p) return aisci_set_error(AISCI_ERR_ALLOC, "pimd_create: out of memory");
  p->cfg = *cfg;
  p->C = malloc(sizeof(double) * (size_t) P * P);
  p->lambda = malloc(sizeof(double) * P);
  p->mass_fac = malloc(sizeof(double) * P);
  p->omega = malloc(sizeof(double) * P);
  p->gamma = malloc(sizeof(double) * P);
  if (!p->C || !p->lambda || !p->mass_fac || !p->omega || !p->gamma) {
    aisci_pimd_destroy(p);
    return aisci_set_error(AISCI_ERR_ALLOC, "pimd_create: out of memory for %d beads", P);
  }
  aisci_pimd_nm_matrix(P, p->C);
  p->omega_p = P * cfg->kT / cfg->hbar;
  for (int k = 0; k < P; k++) {
    p->lambda[k] = ring_eigenvalue(P, k);
    if (cfg->method == AISCI_PIMD_CARTESIAN) {
      p->mass_fac[k] = cfg->fmass;
      p->omega[k] = 0.0;
      p->gamma[k] = 1.0 / cfg->tau;
      continue;
    }
    if (cfg->fmmode == AISCI_PIMD_FM_NORMAL && k > 0)
      p->mass_fac[k] = cfg->fmass * p->lambda[k];
    else
      p->mass_fac[k] = cfg->fmass;
    p->omega[k] = (k == 0) ? 0.0 : p->omega_p * sqrt(p->lambda[k] / p->mass_fac[k]);
    p->gamma[k] = (k == 0) ? 1.0 / cfg->tau : 2.0 * cfg->scale * p->omega[k];
  }
  *out = p;
  return AISCI_OK;
}

void aisci_pimd_destroy(aisci_pimd *p)
{
  if (!p) return;
  free(p->C);
  free(p->lambda);
  free(p->mass_fac);
  free(p->omega);
  free(p->gamma);
  free(p);
}

const aisci_pimd_config *aisci_pimd_get_config(const aisci_pimd *p)
{
  return p ? &p->cfg : NULL;
}
aisci_status aisci_pimd_set_dt(aisci_pimd *p, double dt)
{
  if (!p) return aisci_set_error(AISCI_ERR_ARG, "pimd_set_dt: integrator is NULL");
  if (!positive(dt)) return aisci_set_error(AISCI_ERR_ARG, "time step dt must be > 0, got %g", dt);
  p->cfg.dt = dt;
  return AISCI_OK;
}

aisci_status aisci_pimd_omega_p(const aisci_pimd *p, double *omega_p)
{
  if (!p || !omega_p) return aisci_set_error(AISCI_ERR_ARG, "pimd_omega_p: NULL argument");
  *omega_p = p->omega_p;
  return AISCI_OK;
}

/* One value of mode k from a per-mode table of the integrator. */
static aisci_status mode_value(const aisci_pimd *p, int k, const double *table_of_p, double *out,
                               const char *who)
{
  if (!p || !out) return aisci_set_error(AISCI_ERR_ARG, "%s: NULL argument", who);
  if (k < 0 || k >= p->cfg.nbeads)
    return aisci_set_error(AISCI_ERR_ARG, "%s: mode index %d outside 0..%d", who, k,
                           p->cfg.nbeads - 1);
  *out = table_of_p[k];
  return AISCI_OK;
}

aisci_status aisci_pimd_mass_factor(const aisci_pimd *p, int k, double *out)
{
  return mode_value(p, k, p ? p->mass_fac : NULL, out, "pimd_mass_factor");
}

aisci_status aisci_pimd_mode_frequency(const aisci_pimd *p, int k, double *out)
{
  return mode_value(p, k, p ? p->omega : NULL, out, "pimd_mode_frequency");
}

aisci_status aisci_pimd_friction(const aisci_pimd *p, int k, double *out)
{
  return mode_value(p, k, p ? p->gamma : NULL, out, "pimd_friction");
}

static aisci_status check_call(const aisci_pimd *p, int k, int n, const void *a, const void *b,
                               const char *what)
{
  if (!p) return aisci_set_error(AISCI_ERR_ARG, "%s: integrator is NULL", what);
  if (k < 0 || k >= p->cfg.nbeads)
    return aisci_set_error(AISCI_ERR_ARG, "%s: mode/bead index %d outside 0..%d", what, k,
                           p->cfg.nbeads - 1);
  if (n < 0) return aisci_set_error(AISCI_ERR_ARG, "%s: negative atom count %d", what, n);
  if (n > 0 && (!a || !b)) return aisci_set_error(AISCI_ERR_ARG, "%s: NULL array", what);
  return AISCI_OK;
}

aisci_status aisci_pimd_to_mode(const aisci_pimd *p, int k, int n, const double *beads, double *out)
{
  aisci_status st = check_call(p, k, n, beads, out, "to_mode");
  if (st) return st;
  const int P = p->cfg.nbeads;
  const size_t m = 3 * (size_t) n;
  for (size_t i = 0; i < m; i++) out[i] = 0.0;
  for (int j = 0; j < P; j++) {
    const double c = p->C[j * P + k];
    const double *src = beads + (size_t) j * m;
    for (size_t i = 0; i < m; i++) out[i] += c * src[i];
  }
  return AISCI_OK;
}

aisci_status aisci_pimd_to_bead(const aisci_pimd *p, int j, int n, const double *modes, double *out)
{
  aisci_status st = check_call(p, j, n, modes, out, "to_bead");
  if (st) return st;
  const int P = p->cfg.nbeads;
  const size_t m = 3 * (size_t) n;
  for (size_t i = 0; i < m; i++) out[i] = 0.0;
  for (int k = 0; k < P; k++) {
    const double c = p->C[j * P + k];
    const double *src = modes + (size_t) k * m;
    for (size_t i = 0; i < m; i++) out[i] += c * src[i];
  }
  return AISCI_OK;
}

aisci_status aisci_pimd_b_step(const aisci_pimd *p, int k, int n, const double *mass,
                               const double *f, double *v, double h)
{
  aisci_status st = check_call(p, k, n, f, v, "b_step");
  if (st) return st;
  if (n > 0 && !mass) return aisci_set_error(AISCI_ERR_ARG, "b_step: masses are NULL");
  const double pre = h * p->cfg.ftm2v / p->mass_fac[k];
  for (int i = 0; i < n; i++) {
    const double a = pre / mass[i];
    v[3 * i] += a * f[3 * i];
    v[3 * i + 1] += a * f[3 * i + 1];
    v[3 * i + 2] += a * f[3 * i + 2];
  }
  return AISCI_OK;
}

aisci_status aisci_pimd_a_step(const aisci_pimd *p, int k, int n, double *q, double *v, double h)
{
  aisci_status st = check_call(p, k, n, q, v, "a_step");
  if (st) return st;
  const double w = p->omega[k];
  const size_t m = 3 * (size_t) n;
  if (w == 0.0) {
    for (size_t i = 0; i < m; i++) q[i] += h * v[i];
    return AISCI_OK;
  }
  const double c = cos(w * h), s = sin(w * h);
  for (size_t i = 0; i < m; i++) {
    const double q0 = q[i], v0 = v[i];
    q[i] = c * q0 + (s / w) * v0;
    v[i] = c * v0 - w * s * q0;
  }
  return AISCI_OK;
}

aisci_status aisci_pimd_o_step(const aisci_pimd *p, int k, int n, const int64_t *tags,
                               const double *mass, double *v, double h, uint64_t counter)
{
  aisci_status st = check_call(p, k, n, tags, v, "o_step");
  if (st) return st;
  if (n > 0 && !mass) return aisci_set_error(AISCI_ERR_ARG, "o_step: masses are NULL");
  const double c1 = exp(-p->gamma[k] * h);
  const double c2 = sqrt(1.0 - c1 * c1);
  /* velocity variance of the ring polymer at P T: P kT / (M mvv2e) */
  const double var = p->cfg.nbeads * p->cfg.kT / (p->mass_fac[k] * p->cfg.mvv2e);
  /* counter words: high = (mode << 48) ^ counter, low = tag; Philox scrambles both */
  const uint64_t c_hi = ((uint64_t) k << 48) ^ counter;
  enum { CHUNK = 128 };
  double xi[3 * CHUNK];
  for (int i0 = 0; i0 < n; i0 += CHUNK) {
    const int m = n - i0 < CHUNK ? n - i0 : CHUNK;
    aisci_rng_normal3_n(p->cfg.seed, c_hi, m, tags + i0, xi);
    for (int j = 0; j < m; j++) {
      const int i = i0 + j;
      const double sigma = c2 * sqrt(var / mass[i]);
      for (int d = 0; d < 3; d++) v[3 * i + d] = c1 * v[3 * i + d] + sigma * xi[3 * j + d];
    }
  }
  return AISCI_OK;
}

double aisci_pimd_mass_square(int n, const double *mass, const double *x)
{
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s +=
        mass[i] * (x[3 * i] * x[3 * i] + x[3 * i + 1] * x[3 * i + 1] + x[3 * i + 2] * x[3 * i + 2]);
  return s;
}

aisci_status aisci_pimd_kinetic(const aisci_pimd *p, int k, int n, const double *mass,
                                const double *v, double *kinetic)
{
  aisci_status st = check_call(p, k, n, mass, v, "kinetic");
  if (st) return st;
  if (!kinetic) return aisci_set_error(AISCI_ERR_ARG, "kinetic: NULL output");
  const double s = aisci_pimd_mass_square(n, mass, v);
  *kinetic = 0.5 * p->mass_fac[k] * p->cfg.mvv2e * s;
  return AISCI_OK;
}

aisci_status aisci_pimd_spring_mode(const aisci_pimd *p, int k, int n, const double *mass,
                                    const double *q, double *energy)
{
  aisci_status st = check_call(p, k, n, mass, q, "spring_mode");
  if (st) return st;
  if (!energy) return aisci_set_error(AISCI_ERR_ARG, "spring_mode: NULL output");
  const double s = aisci_pimd_mass_square(n, mass, q);
  *energy = 0.5 * p->cfg.mvv2e * p->omega_p * p->omega_p * p->lambda[k] * s;
  return AISCI_OK;
}

aisci_status aisci_pimd_spring_bead(const aisci_pimd *p, int j, int n, const double *mass,
                                    const double *beads, double *f, double *energy)
{
  aisci_status st = check_call(p, j, n, mass, beads, "spring_bead");
  if (st) return st;
  if (!energy) return aisci_set_error(AISCI_ERR_ARG, "spring_bead: NULL output");
  const int P = p->cfg.nbeads;
  *energy = 0.0;
  if (P == 1) return AISCI_OK;
  const size_t m = 3 * (size_t) n;
  const double *x = beads + (size_t) j * m;
  const double *xm = beads + (size_t) ((j + P - 1) % P) * m;
  const double *xp = beads + (size_t) ((j + 1) % P) * m;
  const double k2 = p->cfg.mvv2e * p->omega_p * p->omega_p;
  double e = 0.0;
  for (int i = 0; i < n; i++) {
    for (int d = 0; d < 3; d++) {
      const size_t a = 3 * (size_t) i + d;
      const double dx = x[a] - xp[a];
      e += mass[i] * dx * dx;
      if (f) f[a] -= k2 * mass[i] * (2.0 * x[a] - xm[a] - xp[a]);
    }
  }
  *energy = 0.5 * k2 * e;
  return AISCI_OK;
}

aisci_status aisci_pimd_estimators(const aisci_pimd *p, int k, const aisci_pimd_bead_sums *sums,
                                   double natoms, double kinetic_centroid, double volume,
                                   double nktv2p, double out[AISCI_PIMD_NVALUES])
{
  if (!p || !sums || !out) return aisci_set_error(AISCI_ERR_ARG, "estimators: NULL argument");
  if (k < 0 || k >= p->cfg.nbeads)
    return aisci_set_error(AISCI_ERR_ARG, "estimators: mode index %d outside 0..%d", k,
                           p->cfg.nbeads - 1);
  if (!(volume > 0))
    return aisci_set_error(AISCI_ERR_ARG, "estimators: volume must be > 0, got %g", volume);
  const int P = p->cfg.nbeads;
  const double kT = p->cfg.kT;
  double total = 0.0, spring = 0.0, xf = 0.0, xcf = 0.0, virial = 0.0;
  for (int j = 0; j < P; j++) {
    total += sums[j].kinetic + sums[j].spring + sums[j].potential;
    spring += sums[j].spring;
    xf += sums[j].xf;
    xcf += sums[j].xcf;
    virial += sums[j].virial;
  }
  const double w_mean = virial / P;
  const double k_prim = 1.5 * natoms * P * kT - spring / P;
  const double k_vir = -0.5 * xf / P;
  const double k_cv = 1.5 * natoms * kT - 0.5 * xcf / P;
  const double pfac = nktv2p / (3.0 * volume);
  out[0] = sums[k].kinetic;
  out[1] = sums[k].spring;
  out[2] = sums[k].potential;
  out[3] = total;
  out[4] = k_prim;
  out[5] = k_vir;
  out[6] = k_cv;
  out[7] = pfac * (2.0 * k_prim + w_mean);
  /* the instantaneous pressure of the centroids that a barostat sees */
  out[8] = pfac * (2.0 * kinetic_centroid + w_mean - xcf / P);
  out[9] = pfac * (2.0 * k_cv + w_mean);
  return AISCI_OK;
}

/* ---------------------------------------------------------------------- barostat */

static int cell_ndim(const aisci_pimd *p)
{
  return p->cfg.pstyle == AISCI_PIMD_ISO ? 1 : 3;
}

static double cell_mass(const aisci_pimd *p)
{
  const double t = p->cfg.taup / (2.0 * AISCI_PI);
  return 3.0 * p->cfg.natoms * p->cfg.nbeads * p->cfg.kT * t * t;
}

aisci_status aisci_pimd_cell_mass(const aisci_pimd *p, double *mass)
{
  if (!p || !mass) return aisci_set_error(AISCI_ERR_ARG, "pimd_cell_mass: NULL argument");
  *mass = cell_mass(p);
  return AISCI_OK;
}

static aisci_status check_cell(const aisci_pimd *p, const void *a, const char *what)
{
  if (!p || !a) return aisci_set_error(AISCI_ERR_ARG, "%s: NULL argument", what);
  if (p->cfg.ensemble < AISCI_PIMD_NPH)
    return aisci_set_error(AISCI_ERR_STATE, "%s: the ensemble has no barostat", what);
  return AISCI_OK;
}

aisci_status aisci_pimd_cell_force(const aisci_pimd *p, const double kin2[3], const double vir[3],
                                   double volume, double force[3])
{
  aisci_status st = check_cell(p, force, "cell_force");
  if (st) return st;
  if (!kin2 || !vir) return aisci_set_error(AISCI_ERR_ARG, "cell_force: NULL sums");
  if (!positive(volume))
    return aisci_set_error(AISCI_ERR_ARG, "cell_force: volume must be finite and > 0, got %g",
                           volume);
  const int P = p->cfg.nbeads;
  const double nf = 3.0 * p->cfg.natoms;
  const double ppext = P * p->cfg.pext * volume;
  /* Jacobian force per direction: BZP P kT; MTTK (total centroid kinetic term) / N_f */
  double jac[3];
  const double kin_total = kin2[0] + kin2[1] + kin2[2];
  for (int d = 0; d < 3; d++)
    jac[d] = p->cfg.barostat == AISCI_PIMD_BZP ? P * p->cfg.kT : kin_total / nf;
  if (p->cfg.pstyle == AISCI_PIMD_ISO) {
    double s = 0.0;
    for (int d = 0; d < 3; d++) s += kin2[d] + vir[d] - ppext + jac[d];
    force[0] = s;
    force[1] = force[2] = 0.0;
  } else {
    for (int d = 0; d < 3; d++) force[d] = kin2[d] + vir[d] - ppext + jac[d];
  }
  return AISCI_OK;
}

aisci_status aisci_pimd_cell_b_step(const aisci_pimd *p, aisci_pimd_cell *cell,
                                    const double force[3], double h)
{
  aisci_status st = check_cell(p, cell, "cell_b_step");
  if (st) return st;
  if (!force) return aisci_set_error(AISCI_ERR_ARG, "cell_b_step: NULL force");
  for (int d = 0; d < cell_ndim(p); d++) cell->p[d] += h * force[d];
  return AISCI_OK;
}

aisci_status aisci_pimd_cell_o_step(const aisci_pimd *p, aisci_pimd_cell *cell, double h,
                                    uint64_t counter)
{
  aisci_status st = check_cell(p, cell, "cell_o_step");
  if (st) return st;
  if (p->cfg.ensemble != AISCI_PIMD_NPT || p->cfg.barostat != AISCI_PIMD_BZP) return AISCI_OK;
  const double c1 = exp(-h / p->cfg.taup), c2 = sqrt(1.0 - c1 * c1);
  const double sigma = c2 * sqrt(cell_mass(p) * p->cfg.nbeads * p->cfg.kT);
  double xi[4];
  /* the cell's noise stream: mode field all ones, tag 0 (atom tags are >= 1) */
  aisci_rng_normal4(p->cfg.seed, (0xffffull << 48) ^ counter, 0, xi);
  for (int d = 0; d < cell_ndim(p); d++) cell->p[d] = c1 * cell->p[d] + sigma * xi[d];
  return AISCI_OK;
}

aisci_status aisci_pimd_cell_rates(const aisci_pimd *p, const aisci_pimd_cell *cell,
                                   double alpha[3])
{
  aisci_status st = check_cell(p, cell, "cell_rates");
  if (st) return st;
  if (!alpha) return aisci_set_error(AISCI_ERR_ARG, "cell_rates: NULL output");
  const double w = cell_mass(p);
  if (p->cfg.pstyle == AISCI_PIMD_ISO)
    alpha[0] = alpha[1] = alpha[2] = cell->p[0] / w;
  else
    for (int d = 0; d < 3; d++) alpha[d] = cell->p[d] / w;
  return AISCI_OK;
}

aisci_status aisci_pimd_cell_a_centroid(const aisci_pimd *p, const double alpha[3], int n,
                                        double *q0, double *v0, double h)
{
  aisci_status st = check_cell(p, alpha, "cell_a_centroid");
  if (st) return st;
  if (n < 0 || (n > 0 && (!q0 || !v0)))
    return aisci_set_error(AISCI_ERR_ARG, "cell_a_centroid: invalid arrays");
  const double nf = 3.0 * p->cfg.natoms;
  /* MTTK damps every velocity component by the extra rate (alpha_x+alpha_y+alpha_z)/N_f */
  const double extra = p->cfg.barostat == AISCI_PIMD_MTTK ? (alpha[0] + alpha[1] + alpha[2]) / nf
                                                          : 0.0;
  double eq[3], sh[3], ev[3];
  for (int d = 0; d < 3; d++) {
    const double a = alpha[d], ah = a * h;
    eq[d] = exp(ah);
    ev[d] = exp(-(a + extra) * h);
    if (extra == 0.0) {
      /* sinh(a h) / a without cancellation for small a h */
      sh[d] = fabs(ah) < 1e-4 ? h * (1.0 + ah * ah / 6.0) : sinh(ah) / a;
    } else {
      /* exact with the extra damping: int_0^h e^{a (h - s)} e^{-(a + extra) s} ds
       * = e^{a h} (1 - e^{-x}) / x * h, x = (2 a + extra) h (series for small x) */
      const double x = (2.0 * a + extra) * h;
      sh[d] = eq[d] * h * (fabs(x) < 1e-5 ? 1.0 - x / 2.0 + x * x / 6.0 : -expm1(-x) / x);
    }
  }
  for (int i = 0; i < n; i++)
    for (int d = 0; d < 3; d++) {
      const size_t k = 3 * (size_t) i + d;
      q0[k] = eq[d] * q0[k] + sh[d] * v0[k];
      v0[k] = ev[d] * v0[k];
    }
  return AISCI_OK;
}

aisci_status aisci_pimd_cell_energies(const aisci_pimd *p, const aisci_pimd_cell *cell,
                                      double volume, double out[3])
{
  aisci_status st = check_cell(p, cell, "cell_energies");
  if (st) return st;
  if (!out) return aisci_set_error(AISCI_ERR_ARG, "cell_energies: NULL output");
  if (!positive(volume))
    return aisci_set_error(AISCI_ERR_ARG, "cell_energies: volume must be finite and > 0, got %g",
                           volume);
  const double w = cell_mass(p);
  double k = 0.0;
  for (int d = 0; d < cell_ndim(p); d++) k += cell->p[d] * cell->p[d] / (2.0 * w);
  out[0] = k;
  out[1] = p->cfg.nbeads * p->cfg.pext * volume;
  out[2] = p->cfg.barostat == AISCI_PIMD_BZP ? -p->cfg.nbeads * p->cfg.kT * log(volume) : 0.0;
  return AISCI_OK;
}

aisci_status aisci_pimd_kinetic_tensor(const aisci_pimd *p, int k, int n, const double *mass,
                                       const double *v, double out[3])
{
  aisci_status st = check_call(p, k, n, mass, v, "kinetic_tensor");
  if (st) return st;
  if (!out) return aisci_set_error(AISCI_ERR_ARG, "kinetic_tensor: NULL output");
  double s[3] = {0.0, 0.0, 0.0};
  for (int i = 0; i < n; i++)
    for (int d = 0; d < 3; d++) s[d] += mass[i] * v[3 * i + d] * v[3 * i + d];
  for (int d = 0; d < 3; d++) out[d] = p->mass_fac[k] * p->cfg.mvv2e * s[d];
  return AISCI_OK;
}

aisci_status aisci_pimd_mode_virial(const aisci_pimd *p, int k, int n, const double *q,
                                    const double *f, double *per_atom, double minus_qf[3],
                                    double *xf)
{
  aisci_status st = check_call(p, k, n, q, f, "mode_virial");
  if (st) return st;
  if (!xf) return aisci_set_error(AISCI_ERR_ARG, "mode_virial: NULL xf");
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    double a = 0.0;
    for (int d = 0; d < 3; d++) {
      const double qf = q[3 * i + d] * f[3 * i + d];
      a += qf;
      if (k > 0 && minus_qf) minus_qf[d] -= qf;
    }
    s += a;
    if (k > 0 && per_atom) per_atom[i] += a;
  }
  *xf = s;
  return AISCI_OK;
}

aisci_status aisci_pimd_bead_virial(const aisci_pimd *p, int n, const double *x,
                                    const double *mode0, const double *f, double *per_atom,
                                    double *xf, double *xcf)
{
  aisci_status st = check_call(p, 0, n, x, mode0, "bead_virial");
  if (st) return st;
  if ((n > 0 && !f) || !xf || !xcf)
    return aisci_set_error(AISCI_ERR_ARG, "bead_virial: NULL f, xf or xcf");
  const double inv_sqrt_p = 1.0 / sqrt((double) p->cfg.nbeads);
  double s = 0.0, sc = 0.0;
  for (int i = 0; i < n; i++) {
    double a = 0.0;
    for (int d = 0; d < 3; d++) {
      s += x[3 * i + d] * f[3 * i + d];
      a += (x[3 * i + d] - inv_sqrt_p * mode0[3 * i + d]) * f[3 * i + d];
    }
    if (per_atom) per_atom[i] = a;
    sc += a;
  }
  *xf = s;
  *xcf = sc;
  return AISCI_OK;
}

aisci_status aisci_pimd_peratom_kinetic(const aisci_pimd *p, int n, int nparts,
                                        const double *shares, double *out, int stride)
{
  if (!p || n < 0 || nparts < 1 || stride < 1)
    return aisci_set_error(AISCI_ERR_ARG,
                           "peratom_kinetic: NULL integrator or bad count (n %d, nparts %d, "
                           "stride %d)",
                           n, nparts, stride);
  if (n > 0 && (!shares || !out))
    return aisci_set_error(AISCI_ERR_ARG, "peratom_kinetic: NULL array");
  for (int i = 0; i < n; i++) {
    double c = 0.0;
    for (int w = 0; w < nparts; w++) c += shares[(size_t) w * n + i];
    out[(size_t) i * stride] = 1.5 * p->cfg.kT - 0.5 * c / p->cfg.nbeads;
  }
  return AISCI_OK;
}

aisci_status aisci_pimd_modes_reproduce(const aisci_pimd *p, int j, int n, const double *modes,
                                        const double *x, double rtol, int *agree)
{
  aisci_status st = check_call(p, j, n, modes, x, "modes_reproduce");
  if (st) return st;
  if (!agree || !(rtol >= 0.0))
    return aisci_set_error(AISCI_ERR_ARG, "modes_reproduce: NULL agree or rtol %g < 0", rtol);
  const int P = p->cfg.nbeads;
  const size_t m = 3 * (size_t) n;
  *agree = 1;
  for (size_t i = 0; i < m; i++) {
    double xb = 0.0; /* aisci_pimd_to_bead()'s sum, in its order */
    for (int k = 0; k < P; k++) xb += p->C[j * P + k] * modes[(size_t) k * m + i];
    if (fabs(xb - x[i]) > rtol * (1.0 + fabs(x[i]))) {
      *agree = 0;
      break;
    }
  }
  return AISCI_OK;
}
