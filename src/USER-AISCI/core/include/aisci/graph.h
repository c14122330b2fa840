/**
 * @file graph.h
 * @brief Atom graphs for neural-network potentials: directed edges within a cutoff and
 *        three-body triplets (pairs of edges sharing a centre), built by a cell list.
 *
 * Conventions (the model-file contract v1 relies on them):
 * - Positions are row-major n x 3 arrays (atom-major); lengths in the caller's unit
 *   (Angstrom for models of contract v1). Cutoffs are in the same unit.
 * - An edge e = (i, j) has centre i (row 0 of the edge index) and neighbour j (row 1),
 *   and vector edge_vec[e] = x_j - x_i (+ the periodic shift S . cell for the periodic
 *   build), with |edge_vec[e]| < cutoff (strict). Every directed pair appears: if
 *   (i, j, S) is an edge, so is (j, i, -S) whenever j is also a centre.
 * - Deterministic order: edges are sorted by centre i, then neighbour j, then the integer
 *   image shift S = (S_a, S_b, S_c) in lexicographic order. The order depends only on
 *   the input, never on the cell-list geometry or on allocation history.
 * - A triplet t = (e1, e2) is an ordered pair of two different edges with the same centre
 *   that are both shorter than cutoff_3body (strict). Both (e1, e2) and (e2, e1) appear.
 *   Triplets are sorted by e1, then e2.
 * - Storage is owned by the ::aisci_graph and reused: a rebuild reallocates only when the
 *   number of edges or triplets exceeds every earlier build's; the pointers returned by
 *   the accessors stay valid until the next build or aisci_graph_destroy().
 * - On failure a build returns the status, sets aisci_last_error(), and leaves the graph
 *   empty (0 edges, 0 triplets), never half built.
 * - One graph must not be used by two threads at once; different graphs are independent.
 * @since 0.1
 */
#ifndef AISCI_GRAPH_H
#define AISCI_GRAPH_H

#include <stdint.h>

#include "aisci/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque, reusable storage for the edges and triplets of one graph. */
typedef struct aisci_graph aisci_graph;

/**
 * Create an empty graph (0 edges, 0 triplets).
 * @param[out] out receives the new graph; set to NULL on failure.
 * @return AISCI_OK, AISCI_ERR_ARG (@p out is NULL) or AISCI_ERR_ALLOC.
 */
AISCI_API aisci_status aisci_graph_create(aisci_graph **out);

/** Release a graph and all its storage. NULL is accepted and ignored. */
AISCI_API void aisci_graph_destroy(aisci_graph *g);

/**
 * Build the graph of n atoms with open boundaries (e.g. LAMMPS local + ghost atoms).
 *
 * Edges (i, j) for every centre i in 0..ncenter-1 and every neighbour j in 0..n-1,
 * j != i, with |x_j - x_i| < cutoff; triplets if cutoff_3body > 0. Cell list with cells
 * no smaller than the cutoff: O(n) time and memory for bounded density.
 * Atoms at the same position (i != j) give a zero-length edge: the caller's data decides.
 *
 * @param g            graph to fill (its previous content is replaced).
 * @param n            number of atoms, n >= 0.
 * @param x            positions, n x 3 row-major (length unit); may be NULL only if n == 0.
 *                     Every coordinate must be finite.
 * @param ncenter      centres are atoms 0..ncenter-1, 0 <= ncenter <= n (pass n for all).
 * @param cutoff       edge cutoff (length unit), finite and > 0.
 * @param cutoff_3body triplet cutoff (length unit), 0 <= cutoff_3body <= cutoff;
 *                     0 means no triplets.
 * @return AISCI_OK; AISCI_ERR_ARG for a NULL @p g or @p x, n < 0, ncenter outside
 *         [0, n], a cutoff <= 0 or non-finite, cutoff_3body < 0 or > cutoff, or a
 *         non-finite coordinate; AISCI_ERR_ALLOC when storage cannot grow.
 */
AISCI_API aisci_status aisci_graph_build(aisci_graph *g, int n, const double *x, int ncenter,
                                         double cutoff, double cutoff_3body);

/**
 * Build the graph of n atoms in a periodic cell (all n atoms are centres).
 *
 * Edges (i, j, S) for every pair of atoms and every integer image shift S with
 * |x_j - x_i + S_a a + S_b b + S_c c| < cutoff, where S_d = 0 along non-periodic
 * directions, excluding only i == j with S = 0. All images within the cutoff are found,
 * also when the cell is smaller than the cutoff (then an atom is its own neighbour
 * through nonzero shifts, and one pair (i, j) can have several edges). Atoms need not
 * lie inside the cell: x is used as given, so edge_vec is exactly
 * x_j - x_i + S . cell whatever images the atoms are stored in.
 *
 * @param g            graph to fill (its previous content is replaced).
 * @param n            number of atoms, n >= 0.
 * @param x            positions, n x 3 row-major (length unit); may be NULL only if n == 0.
 *                     Every coordinate must be finite.
 * @param cell         lattice vectors as rows: cell[0] = a, cell[1] = b, cell[2] = c
 *                     (length unit), any right- or left-handed triclinic shape; must be
 *                     non-singular (|det| > 1e-12 |a| |b| |c|) even along
 *                     non-periodic directions, which are used to express positions
 *                     in fractional coordinates.
 *                     (In C before C23, passing a non-const double[3][3] here draws a
 *                     -Wpedantic warning only; the call is correct.)
 * @param pbc          pbc[d] = 1 if direction d (a, b, c) is periodic, 0 if not.
 * @param cutoff       edge cutoff (length unit), finite and > 0.
 * @param cutoff_3body triplet cutoff, 0 <= cutoff_3body <= cutoff; 0 means no triplets.
 * @return AISCI_OK; AISCI_ERR_ARG for a NULL @p g, @p x, @p cell or @p pbc, n < 0, a
 *         pbc value other than 0/1, a singular or non-finite cell, a bad cutoff (as for
 *         aisci_graph_build()) or a non-finite coordinate; AISCI_ERR_ALLOC when storage
 *         cannot grow (a tiny cell with a huge cutoff needs many images).
 */
AISCI_API aisci_status aisci_graph_build_periodic(aisci_graph *g, int n, const double *x,
                                                  const double cell[3][3], const int pbc[3],
                                                  double cutoff, double cutoff_3body);

/** Number of directed edges E of the last successful build (0 for NULL or empty). */
AISCI_API int64_t aisci_graph_num_edges(const aisci_graph *g);

/**
 * Edge index, 2 x E row-major int64: entries [0, E) are the centres i, entries [E, 2E)
 * the neighbours j. Borrowed; NULL when E == 0 or @p g is NULL.
 */
AISCI_API const int64_t *aisci_graph_edge_index(const aisci_graph *g);

/**
 * Edge vectors, E x 3 row-major: x_j - x_i (+ S . cell), length unit. Borrowed; NULL
 * when E == 0 or @p g is NULL.
 */
AISCI_API const double *aisci_graph_edge_vec(const aisci_graph *g);

/** Number of triplets T of the last successful build (0 for NULL, or no cutoff_3body). */
AISCI_API int64_t aisci_graph_num_triplets(const aisci_graph *g);

/**
 * Triplets, T x 2 row-major int64: (e1, e2) edge ids with the same centre, e1 != e2,
 * both edges shorter than cutoff_3body. Borrowed; NULL when T == 0 or @p g is NULL.
 */
AISCI_API const int64_t *aisci_graph_triplets(const aisci_graph *g);

#ifdef __cplusplus
}
#endif
#endif
