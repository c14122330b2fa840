/**
 * @file dplr.h
 * @brief Wannier-centroid (WC) bookkeeping of Deep Potential Long-Range (DPLR): place
 *        the WCs from the DW model's displacements, move the forces on the WCs back to
 *        their parent atoms (chain rule through w = x + d(x)), the virial correction,
 *        and a uniform external electric field.
 *
 * The total energy of DPLR is E(x) = E_sr(x) + E_elec(x, w(x)) with one WC per parent
 * atom p at w_p = x_p + d_p(x). With F_wc,p = -dE/dw_p (the force on the WC as a
 * particle), the force on the real atoms is
 *
 *     F_i = -dE/dx_i|_w + F_wc,i [i a parent] + sum_p F_wc,p . d(d_p)/dx_i,
 *
 * where the last term is one vector-Jacobian product of the DW model with
 * grad_out_p = dE/d(d_p) = -F_wc,p (aisci_model_vector_backward, not in this library).
 * The virial W = -dE/d(strain) (W = sum r F convention) of the real atoms is the
 * virial computed with the WCs as independent particles (W_wc_as_particles, which
 * strains w affinely) plus the correction
 *
 *     dW_ab = - sum_p F_wc,p,a d_p,b  +  W_vjp,ab,
 *
 * W_vjp being the virial of the vector-Jacobian product: the affine strain moves
 * w_p by strain . (x_p + d_p), the real WC moves by strain . x_p + delta d_p, so the
 * affine part of d_p is removed and its actual change (through the DW model's edge
 * vectors) is added. Index order: W_ab = -dE/d eps_ab for x_a -> x_a + eps_ab x_b, i.e.
 * W = sum F_a x_b (the order of LAMMPS's fix efield); aisci_model_vector_backward
 * returns -sum edge_vec_a G_b, the transpose of W_vjp in this order. For a rotation-
 * equivariant DW model dW is symmetric. docs/fix_dplr.md has the derivation.
 *
 * Arrays are row-major n x 3 (atom-major); the functions are local (no MPI, no
 * threads, no globals) and check their arguments (AISCI_ERR_ARG with a message).
 * @since 0.3
 */
#ifndef AISCI_DPLR_H
#define AISCI_DPLR_H

#include "aisci/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Place WCs: x[wc[k]] = x[parent[k]] + d[parent[k]] for k < n_pairs.
 * @param n_pairs number of (WC, parent) pairs, >= 0.
 * @param n_atoms length of x and d (rows); every index must be in [0, n_atoms).
 * @param wc, parent atom indices of each pair (a WC index must differ from every parent).
 * @param d displacements, n_atoms x 3 (only parent rows are read).
 * @param[in,out] x positions, n_atoms x 3 (only WC rows are written).
 * @return AISCI_OK; AISCI_ERR_ARG for a NULL array (with n_pairs > 0), a negative count
 *         or an index out of range (nothing is written then).
 */
AISCI_API aisci_status aisci_dplr_place(int n_pairs, int n_atoms, const int *wc,
                                        const int *parent, const double *d, double *x);

/**
 * Take the forces off the WCs: f_at_parent[parent[k]] += f[wc[k]], then f[wc[k]] = 0.
 * @param[in,out] f forces, n_atoms x 3.
 * @param[in,out] f_at_parent n_atoms x 3, accumulated (the caller zeroes it and, in a
 *                parallel code, sends the rows of non-owned parents to their owners).
 * @return AISCI_OK; AISCI_ERR_ARG as aisci_dplr_place().
 */
AISCI_API aisci_status aisci_dplr_collect(int n_pairs, int n_atoms, const int *wc,
                                          const int *parent, double *f, double *f_at_parent);

/**
 * Parent terms of the chain rule for n_parents parents (indices parent[k] into the
 * n_atoms-row arrays): f[p] += f_wc[p]; grad_out[k] = -f_wc[p] (the DW backward's input,
 * dE/d(d_p), row k); virial9 += -f_wc[p] (x) d[p] (3 x 3 row-major, [a][b] =
 * -f_wc,a d_b, accumulated).
 * @param f_wc n_atoms x 3, the total WC force of each parent (from aisci_dplr_collect()).
 * @param d n_atoms x 3 displacements.
 * @param[in,out] f n_atoms x 3 forces (accumulated).
 * @param[out] grad_out n_parents x 3 (overwritten), or NULL.
 * @param[in,out] virial9 accumulated, or NULL.
 * @return AISCI_OK; AISCI_ERR_ARG for NULL f_wc/d/f (n_parents > 0), negative counts or
 *         an index out of range.
 */
AISCI_API aisci_status aisci_dplr_parent_forces(int n_parents, int n_atoms, const int *parent,
                                                const double *f_wc, const double *d, double *f,
                                                double *grad_out, double virial9[9]);

/**
 * Uniform external field E on n charges: f_i += q_i E; *energy += -sum_i q_i E . x_i
 * (x_i unwrapped positions: the energy of point charges in a uniform field, so that
 * -dE/dx_i = q_i E). Units are the caller's (field in force / charge).
 * @param x n x 3 unwrapped positions; @param q n charges; @param field E (3 values).
 * @param[in,out] f n x 3 forces (accumulated), or NULL; @param[in,out] energy or NULL.
 * @return AISCI_OK; AISCI_ERR_ARG for n < 0, NULL x/q/field (n > 0) or a non-finite field.
 */
AISCI_API aisci_status aisci_dplr_efield(int n, const double *x, const double *q,
                                         const double field[3], double *f, double *energy);

#ifdef __cplusplus
}
#endif
#endif
