/* Private interface between the PIMD files of libaisci_core (pimd.c, pimd_step.c); not
 * installed, not part of the API. */
#ifndef AISCI_PIMD_INTERNAL_H
#define AISCI_PIMD_INTERNAL_H

/* sum_i m_i |x_i|^2 over n atoms (x: n x 3 contiguous): the sum behind the kinetic and
 * spring energies and the centroid kinetic energy, in one order of operations. */
double aisci_pimd_mass_square(int n, const double *mass, const double *x);

#endif
