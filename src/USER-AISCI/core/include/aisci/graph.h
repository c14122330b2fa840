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
 * @since 0.1.0
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
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_graph_create(aisci_graph **out);

/** Release a graph and all its storage. NULL is accepted and ignored. @since 0.1.0 */
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
 * @since 0.1.0
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
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_graph_build_periodic(aisci_graph *g, int n, const double *x,
                                                  const double cell[3][3], const int pbc[3],
                                                  double cutoff, double cutoff_3body);

/** Number of directed edges E of the last successful build (0 for NULL or empty). @since 0.1.0 */
AISCI_API int64_t aisci_graph_num_edges(const aisci_graph *g);

/**
 * Edge index, 2 x E row-major int64: entries [0, E) are the centres i, entries [E, 2E)
 * the neighbours j. Borrowed; NULL when E == 0 or @p g is NULL.
 * @since 0.1.0
 */
AISCI_API const int64_t *aisci_graph_edge_index(const aisci_graph *g);

/**
 * Edge vectors, E x 3 row-major: x_j - x_i (+ S . cell), length unit. Borrowed; NULL
 * when E == 0 or @p g is NULL.
 * @since 0.1.0
 */
AISCI_API const double *aisci_graph_edge_vec(const aisci_graph *g);

/** Number of triplets T of the last successful build (0 for NULL, or no cutoff_3body). @since 0.1.0 */
AISCI_API int64_t aisci_graph_num_triplets(const aisci_graph *g);

/**
 * Triplets, T x 2 row-major int64: (e1, e2) edge ids with the same centre, e1 != e2,
 * both edges shorter than cutoff_3body. Borrowed; NULL when T == 0 or @p g is NULL.
 * @since 0.1.0
 */
AISCI_API const int64_t *aisci_graph_triplets(const aisci_graph *g);

/**
 * Integer image shifts of the edges, E x 3 row-major: edge_vec[e] = x_j - x_i + S_a a +
 * S_b b + S_c c for the periodic build (all zero for aisci_graph_build()). A caller that
 * keeps the candidate edges between rebuilds recomputes the vectors from these (the box
 * may change: barostats, fix deform) without recovering S by rounding. Borrowed; NULL
 * when E == 0 or @p g is NULL.
 * @since 0.1.0
 */
AISCI_API const int *aisci_graph_edge_shift(const aisci_graph *g);

/** Number of atoms n of the last successful build or selection (0 for NULL or empty). @since 0.1.0 */
AISCI_API int aisci_graph_num_atoms(const aisci_graph *g);

/**
 * The atoms of a graph from a host's rows (e.g. LAMMPS local then ghost atoms): first the
 * centres, the owned rows (i < n_local) of a mapped type that pass both filters, then
 * every other row of a mapped type (model_type[type] >= 0), each group in row order. The
 * one "locals first" rule of pair_style aisci, fix dplr and compute aisci/cost.
 * @param type n_atoms types in 1..ntypes; @param model_type ntypes + 1 entries: model
 *        type index per host type, < 0 to leave the type out.
 * @param centre_type NULL (every type) or ntypes + 1 flags: only owned rows of a type
 *        with a nonzero flag are centres (fix dplr: the parent types).
 * @param centre_row NULL (every row) or n_local flags: only owned rows with a nonzero
 *        flag are centres (compute aisci/cost: the group).
 * @param x n_atoms x 3 positions, or NULL; @param[out] pos n_graph x 3 positions of the
 *        graph atoms (capacity n_atoms x 3), written when x and pos are not NULL.
 * @param[out] index host row of each graph atom, @param[out] types its model type
 *        (capacity n_atoms each); @param[out] n_graph graph atoms; @param[out] n_centres
 *        centres (graph atoms 0..n_centres-1).
 * @return AISCI_OK; AISCI_ERR_ARG for counts out of range (n_local > n_atoms), NULL
 *         arrays or a type outside 1..ntypes.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_graph_gather(int n_local, int n_atoms, const int *type, int ntypes,
                                          const int *model_type, const int *centre_type,
                                          const int *centre_row, const double *x, int *index,
                                          int64_t *types, double *pos, int *n_graph,
                                          int *n_centres);

/**
 * Edges and triplets at the current positions from candidate edges built with a larger
 * cutoff (cutoff + skin) at the last neighbour-list rebuild: the candidate edges whose
 * vector x_j - x_i (+ S . cell with the candidates' image shifts when @p cell is not
 * NULL) is now shorter than @p cutoff (strict), in the candidates' order, and their
 * triplets (the rule above). While no atom has moved more than skin / 2 this is the graph
 * a fresh build would give. Graph atom g is row index[g] of x (index NULL: row g).
 * @param out graph that receives the edges (replaced; must not be @p candidates).
 * @param candidates the candidate graph of aisci_graph_num_atoms(candidates) atoms.
 * @param n_atoms rows of x; @param x n_atoms x 3 current positions.
 * @param cell the current lattice vectors as rows (periodic candidates), or NULL.
 * @return AISCI_OK; AISCI_ERR_ARG for a NULL graph (or out == candidates), NULL x with
 *         atoms, a cutoff <= 0 or non-finite, cutoff_3body outside [0, cutoff], or a row
 *         index outside [0, n_atoms); AISCI_ERR_ALLOC. On failure @p out is empty.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_graph_select(aisci_graph *out, const aisci_graph *candidates,
                                          int n_atoms, const double *x, const int *index,
                                          const double cell[3][3], double cutoff,
                                          double cutoff_3body);

/**
 * Edge and triplet ranges of the centres of a graph whose edges are grouped by centre
 * (every build and selection): the edges of centre c are [edge_start[c], edge_start[c+1]),
 * its triplets [trip_start[c], trip_start[c+1]).
 * @param n_centres C; every edge's centre must be in [0, C).
 * @param[out] edge_start C + 1 entries; @param[out] trip_start C + 1 entries, or NULL.
 * @return AISCI_OK; AISCI_ERR_ARG for NULL arguments, C < 0, or an edge whose centre is
 *         outside [0, C) or out of order.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_graph_centre_ranges(const aisci_graph *g, int n_centres,
                                                 int64_t *edge_start, int64_t *trip_start);

/**
 * The subgraph of the centres kept on this rank (dest[c] == rank): their edges in order
 * and their triplets, edge ids renumbered; the atoms stay those of @p g (the ring
 * balancer's own graph: the items computed here, over all local and ghost atoms).
 * @param out graph that receives the subgraph (replaced; must not be @p g).
 * @param n_centres C; every edge's centre must be in [0, C); @param dest C ranks.
 * @return AISCI_OK; AISCI_ERR_ARG for NULL arguments, out == g, C < 0, or an edge
 *         whose centre is outside [0, C) or out of order; AISCI_ERR_ALLOC.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_graph_keep_centres(aisci_graph *out, const aisci_graph *g,
                                                int n_centres, const int *dest, int rank);

/**
 * Work estimate of every centre of a graph, the per-atom cost that the ring balancer of
 * pair_style aisci and compute aisci/cost use:
 * cost[c] = weight[0] + weight[1] x (edges of c) + weight[2] x (triplets of c), where the
 * triplets of c are the m_c (m_c - 1) ordered pairs of different edges of c that are both
 * shorter than @p cutoff_3body (the triplets above), and 0 when @p cutoff_3body is 0.
 * @param n_centres number of centres (>= 0); cost has n_centres entries, overwritten.
 * @param n_edges   E >= 0.
 * @param centre    E centre indices (row 0 of an edge_index); edges whose centre is >=
 *                  n_centres (e.g. ghost centres) are ignored.
 * @param edge_vec  E x 3 edge vectors; may be NULL when cutoff_3body is 0.
 * @param weight    3 finite weights >= 0: per atom, per edge, per triplet.
 * @return AISCI_OK; AISCI_ERR_ARG for a negative count or centre, NULL arrays where data
 *         is needed, a negative or non-finite weight or cutoff_3body; AISCI_ERR_ALLOC.
 * @since 0.1.0 (was aisci_ringlb_centre_cost, 0.2)
 */
AISCI_API aisci_status aisci_graph_centre_cost(int n_centres, int64_t n_edges,
                                               const int64_t *centre, const double *edge_vec,
                                               double cutoff_3body, const double weight[3],
                                               double *cost);

#ifdef __cplusplus
}
#endif
#endif
