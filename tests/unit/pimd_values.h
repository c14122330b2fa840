/* Value forms of the status-returning PIMD getters, for the unit tests' arithmetic: each
 * returns the value, or NaN (which fails every CHECK_CLOSE) when the call's status is not
 * AISCI_OK. The status paths themselves are tested directly in the test files. */
#ifndef AISCI_TEST_PIMD_VALUES_H
#define AISCI_TEST_PIMD_VALUES_H

#include <math.h>

#include "aisci/pimd.h"

static inline double pv_lambda(int P, int k)
{
  double x;
  return aisci_pimd_lambda(P, k, &x) == AISCI_OK ? x : NAN;
}
static inline double pv_omega_p(const aisci_pimd *p)
{
  double x;
  return aisci_pimd_omega_p(p, &x) == AISCI_OK ? x : NAN;
}
static inline double pv_mass_factor(const aisci_pimd *p, int k)
{
  double x;
  return aisci_pimd_mass_factor(p, k, &x) == AISCI_OK ? x : NAN;
}
static inline double pv_mode_frequency(const aisci_pimd *p, int k)
{
  double x;
  return aisci_pimd_mode_frequency(p, k, &x) == AISCI_OK ? x : NAN;
}
static inline double pv_friction(const aisci_pimd *p, int k)
{
  double x;
  return aisci_pimd_friction(p, k, &x) == AISCI_OK ? x : NAN;
}
static inline double pv_kinetic(const aisci_pimd *p, int k, int n, const double *m, const double *v)
{
  double x;
  return aisci_pimd_kinetic(p, k, n, m, v, &x) == AISCI_OK ? x : NAN;
}
static inline double pv_spring_mode(const aisci_pimd *p, int k, int n, const double *m,
                                    const double *q)
{
  double x;
  return aisci_pimd_spring_mode(p, k, n, m, q, &x) == AISCI_OK ? x : NAN;
}
static inline double pv_spring_bead(const aisci_pimd *p, int j, int n, const double *m,
                                    const double *beads, double *f)
{
  double x;
  return aisci_pimd_spring_bead(p, j, n, m, beads, f, &x) == AISCI_OK ? x : NAN;
}
static inline double pv_cell_mass(const aisci_pimd *p)
{
  double x;
  return aisci_pimd_cell_mass(p, &x) == AISCI_OK ? x : NAN;
}

#endif
