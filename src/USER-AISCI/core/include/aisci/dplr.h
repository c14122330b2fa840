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
 * @since 0.1.0
 */
#ifndef AISCI_DPLR_H
#define AISCI_DPLR_H

#include <stdint.h>

#include "aisci/graph.h"
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
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_dplr_place(int n_pairs, int n_atoms, const int *wc,
                                        const int *parent, const double *d, double *x);

/**
 * Take the forces off the WCs: f_at_parent[parent[k]] += f[wc[k]], then f[wc[k]] = 0.
 * @param[in,out] f forces, n_atoms x 3.
 * @param[in,out] f_at_parent n_atoms x 3, accumulated (the caller zeroes it and, in a
 *                parallel code, sends the rows of non-owned parents to their owners).
 * @return AISCI_OK; AISCI_ERR_ARG as aisci_dplr_place().
 * @since 0.1.0
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
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_dplr_parent_forces(int n_parents, int n_atoms, const int *parent,
                                                const double *f_wc, const double *d, double *f,
                                                double *grad_out, double virial9[9]);

/**
 * Add the result of the DW model's vector-Jacobian product (aisci_model_vector_backward
 * with grad_out from aisci_dplr_parent_forces()): f[index[k]] += f_graph[k] for the
 * n_graph graph atoms, and virial9 += the transpose of w_api (the C API returns
 * -sum vec_a G_b, the transpose of W_vjp in the order of this header).
 * @param index row of each graph atom in [0, n_atoms); @param f_graph n_graph x 3.
 * @param w_api the backward's 3 x 3 virial, or NULL; @param[in,out] f n_atoms x 3
 *        (accumulated); @param[in,out] virial9 accumulated, or NULL (then w_api is unused).
 * @return AISCI_OK; AISCI_ERR_ARG for a negative count, NULL index/f_graph/f
 *         (n_graph > 0), w_api NULL with virial9 not NULL, or an index out of range
 *         (nothing is added then). @since 0.1.0
 */
AISCI_API aisci_status aisci_dplr_jacobian_forces(int n_graph, int n_atoms, const int *index,
                                                  const double *f_graph, const double *w_api,
                                                  double *f, double virial9[9]);

/**
 * Uniform external field E on n charges: f_i += q_i E; *energy += -sum_i q_i E . x_i
 * (x_i unwrapped positions: the energy of point charges in a uniform field, so that
 * -dE/dx_i = q_i E). Units are the caller's (field in force / charge).
 * @param x n x 3 unwrapped positions; @param q n charges; @param field E (3 values).
 * @param[in,out] f n x 3 forces (accumulated), or NULL; @param[in,out] energy or NULL.
 * @return AISCI_OK; AISCI_ERR_ARG for n < 0, NULL x/q/field (n > 0) or a non-finite field.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_dplr_efield(int n, const double *x, const double *q,
                                         const double field[3], double *f, double *energy);

/* ------------------------------------------------------------------------------------
 * Atom-type roles, the WC -> parent map and the DW graph (fix dplr, steps 1-2). Type
 * tables have ntypes + 1 entries, indexed by the LAMMPS type 1..ntypes (entry 0 unused):
 * wc_of_parent[t] is the WC type of parent type t, parent_of_wc[t] the parent type of WC
 * type t, 0 where t has no such role. Messages are those fix dplr reports after its
 * "fix dplr: " prefix; they name fix dplr's keyword type_associate, which fills the
 * tables. @since 0.1.0
 * ------------------------------------------------------------------------------------ */

/**
 * Record one (parent type, WC type) pair: wc_of_parent[parent_type] = wc_type,
 * parent_of_wc[wc_type] = parent_type. The tables start zeroed.
 * @return AISCI_OK; AISCI_ERR_ARG (nothing recorded) for ntypes < 1, a NULL table, a type
 *         outside 1..ntypes, parent_type == wc_type ("a type cannot be its own WC type
 *         (P W)") or a type that has a role already ("type T appears twice"; the parent
 *         type is checked first).
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_dplr_associate(int ntypes, int parent_type, int wc_type,
                                            int *wc_of_parent, int *parent_of_wc);

/** Element lookup of aisci_dplr_type_map(): the model type of @p element, or an error. */
typedef aisci_status (*aisci_dplr_lookup_fn)(void *ctx, const char *element, int *model_type);

/**
 * Map the LAMMPS types to the DW model's types. For each type t in order: a WC type must
 * have element "NULL" (model_type -1); a type of element "NULL" is not in the graph
 * (-1) and must not be a parent type; any other element gets lookup()'s model type, and
 * a parent type's element must be one of the space-separated names in @p selected (the
 * elements the DW model predicts a WC for).
 * @param element element name of each type (ntypes + 1 entries, entry 0 unused).
 * @param selected the model's selected_types, or NULL (none).
 * @param lookup model type of an element; on failure it returns a status and sets
 *        aisci_last_error(), which is quoted.
 * @param[out] model_type ntypes + 1 entries, -1 where the type is not in the graph.
 * @return AISCI_OK; the first failure: AISCI_ERR_ARG ("elements: WC type T must be NULL,
 *         got E", "parent type T is mapped to NULL", "parent type T is element E, which
 *         the DW model does not predict a WC for (selected_types = S)", or NULL
 *         arguments), or lookup()'s status ("atom type T (element E): <its message>").
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_dplr_type_map(int ntypes, const char *const *element,
                                           const int *wc_of_parent, const int *parent_of_wc,
                                           const char *selected, aisci_dplr_lookup_fn lookup,
                                           void *ctx, int *model_type);

/**
 * Count the bonds of the WC bond type(s) stored on one rank. Bond k joins row
 * bonds[2k] (the atom that stores it) and row bonds[2k + 1] (its partner's image); the
 * end of a WC type is the WC (the storing atom when both are), the other end must be of
 * that WC type's parent type. Then counts (n_atoms x 3, accumulated) get, at the WC,
 * [0] += the parent's ID and [1] += 1, and at the parent [2] += 1. With both_sides != 0
 * every bond is stored by both its atoms (LAMMPS newton_bond off): a bond stored by the
 * parent is skipped, its WC counts it. Sum counts over the images of each atom (reverse
 * communication), then check them with aisci_dplr_list_wcs().
 * @param bonds n_bonds x 2 rows in [0, n_atoms); @param type n_atoms types in 1..ntypes
 *        (those of bonded rows are checked); @param tag n_atoms atom IDs.
 * @param bond_name the bond type(s) as the messages name them ("2", "2 or 3").
 * @return AISCI_OK; AISCI_ERR_ARG at the first bad bond ("bond type B joins atoms ID I
 *         and J (types TI and TJ), neither of which is a WC type of type_associate", "WC
 *         atom ID W (type TW) is bonded by bond type B to atom ID P of type TP, but
 *         type_associate makes type T its parent"; counts keep the bonds before it), or
 *         for bad arguments (nothing counted).
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_dplr_count_bonds(int n_bonds, const int *bonds, int n_atoms,
                                              const int *type, const int64_t *tag, int ntypes,
                                              const int *parent_of_wc, int both_sides,
                                              const char *bond_name, double *counts);

/**
 * Check the summed counts of the n_local owned atoms (rows 0..n_local-1) and list their
 * WCs in row order: every atom of a WC type needs exactly one bond to a parent, every atom
 * of a parent type exactly one WC (all WCs are checked before the parents, so that one
 * missing bond names the WC).
 * @param counts n_local x 3 (at least), from aisci_dplr_count_bonds().
 * @param[out] wc rows of the WCs, @param[out] parent_tag their parents' IDs (capacity
 *             n_local each); @param[out] n_wc their number.
 * @return AISCI_OK; AISCI_ERR_ARG for the first bad atom ("WC atom ID W (type T) has N
 *         bonds of type B to a parent; it needs exactly one", "atom ID P (type T, parent
 *         type of WC type TW) has N WCs bonded to it by bond type B; it needs exactly
 *         one"), a type outside 1..ntypes or NULL arguments.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_dplr_list_wcs(int n_local, const int *type, const int64_t *tag,
                                           int ntypes, const int *wc_of_parent,
                                           const int *parent_of_wc, const double *counts,
                                           const char *bond_name, int *wc, int64_t *parent_tag,
                                           int *n_wc);

/**
 * The atoms of the DW graph: first the parents among the n_local owned rows (the
 * centres: with one message-passing layer their d needs only their own edges), then
 * every other row, owned or ghost, of a type in the model (model_type >= 0), each group
 * in row order: aisci_graph_gather() with the parent types as centre types. The edges at
 * the current positions then come from aisci_graph_select().
 * @param type n_atoms types in 1..ntypes; @param model_type ntypes + 1 entries
 *        (aisci_dplr_type_map()).
 * @param x n_atoms x 3 positions, or NULL; @param[out] pos n_graph x 3 positions of the
 *        graph atoms (capacity n_atoms x 3), written when x and pos are not NULL.
 * @param[out] index row of each graph atom, @param[out] types its model type (capacity
 *        n_atoms each); @param[out] n_graph graph atoms; @param[out] n_centres parents.
 * @return AISCI_OK; AISCI_ERR_ARG for counts out of range (n_local > n_atoms), NULL
 *         arrays or a type outside 1..ntypes.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_dplr_graph_atoms(int n_local, int n_atoms, const int *type,
                                              int ntypes, const int *wc_of_parent,
                                              const int *model_type, const double *x,
                                              int *index, int64_t *types, double *pos,
                                              int *n_graph, int *n_centres);

#ifdef __cplusplus
}
#endif
#endif
