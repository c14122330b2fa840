/**
 * @file pppm.h
 * @brief Reciprocal-space part of Ewald electrostatics by particle-particle
 *        particle-mesh (PPPM / P3M) on FFTW, parallel over the ranks of a communicator.
 *
 * Method (details, formulas and figures in docs/pppm_core.md):
 * - Ewald split of the Coulomb kernel at g = g_ewald: 1/r = erfc(g r)/r + erf(g r)/r.
 *   This object computes only the smooth erf part (the reciprocal-space sum); the caller
 *   adds the short-range part (aisci_pppm_real_pair()) and the self and background terms
 *   (aisci_pppm_self_energy()).
 * - Charges are assigned to a regular grid along the three cell vectors with cardinal
 *   B-splines of order P (Hockney-Eastwood assignment functions, P = 2..7), the Poisson
 *   equation is solved by FFT with the optimal influence function of Hockney and
 *   Eastwood (in the form of Deserno and Holm, 1998) and the field is differentiated
 *   in k-space (ik differentiation, three inverse FFTs) or by differentiating the
 *   assignment functions (ad: one inverse FFT, ad's own optimal influence function and
 *   a correction of the self-force of each charge).
 * - Optional Gaussian charges (DPLR): with beta > 0 the pair kernel is erf(beta r)/r
 *   (each charge a normalised Gaussian of standard deviation 1/(2 beta) per Cartesian
 *   direction), so the reciprocal-space kernel carries exp(-k^2/(4 beta^2)) in addition
 *   to Ewald's exp(-k^2/(4 g^2)). Both together act as one Ewald parameter g_eff with
 *   1/g_eff^2 = 1/g^2 + 1/beta^2. With beta > 0 and g_ewald = 0 there is no real-space
 *   part at all (g_eff = beta), the usual DPLR set-up.
 *
 * Units: positions and cell vectors in the caller's length unit, charges in the
 * caller's charge unit; energy = qqrd2e * q_i q_j / r. Arrays of n atoms x 3 are
 * row-major (atom-major).
 *
 * Parallel layout: the grid is cut into slabs of planes along the third cell vector c
 * (FFTW's MPI interface). Every rank passes its own atoms only, at any positions (they
 * need not lie in the rank's slab or even in the box: periodic images are folded).
 * Charge planes a rank touches are summed onto their owners; field planes go back the
 * same way. Results do not depend on the number of ranks beyond rounding.
 *
 * Steps and threads: aisci_pppm_compute() = aisci_pppm_spread() (charges of the atoms
 * into this rank's grid patches, reads the atoms, agrees on errors over the object's atom
 * communicator), aisci_pppm_solve() (patches summed onto the planes' owners, FFTs,
 * influence function, field patches sent back: all the grid-sized work; touches no atom
 * array, communicates only on the object's own FFT communicator, a duplicate of the one
 * given to create) and aisci_pppm_interpolate() (field to forces, per atom only). The three must be called in this
 * order, each collectively by all ranks. solve() may run on another thread while the
 * caller's thread does other work (for example neural-network inference) as long as
 * that work does not call this object. If the other thread makes MPI calls at the same
 * time, MPI must have been initialised with MPI_THREAD_MULTIPLE; if no other thread
 * calls MPI while solve() runs, MPI_THREAD_SERIALIZED is enough (MPI_THREAD_FUNNELED if
 * solve() runs on the main thread). aisci_pppm_create() and aisci_pppm_destroy() plan
 * and free FFTW plans, which FFTW does not allow concurrently with other planning on
 * any thread: call them from one thread.
 * @since 0.1.0
 */
#ifndef AISCI_PPPM_H
#define AISCI_PPPM_H

#include <mpi.h>

#include "aisci/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest grid size along one cell vector (as LAMMPS's own PPPM): larger meshes are
 * refused by aisci_pppm_create() before anything is allocated. @since 0.1.0 */
#define AISCI_PPPM_MAX_GRID 16384

/** Estimated mesh memory of aisci_pppm_create() per grid point and rank, in bytes (charge
 * density, three field components, two complex transforms, influence function). A mesh
 * whose estimate, times the ranks of one node, exceeds that node's physical memory is
 * refused before anything is allocated. @since 0.1.0 */
#define AISCI_PPPM_BYTES_PER_POINT 56

/** How the field is obtained from the potential on the mesh. */
typedef enum aisci_pppm_diff {
  AISCI_PPPM_IK = 0, /**< k-space gradient: one forward and three inverse FFTs */
  AISCI_PPPM_AD = 1  /**< analytic differentiation of the assignment functions: one inverse
                          FFT; momentum is conserved only to the accuracy */
} aisci_pppm_diff;

/** Who runs the grid-sized work (aisci_pppm_solve()). @since 0.1.0 */
typedef enum aisci_pppm_layout {
  AISCI_PPPM_LAYOUT_RANK = 0, /**< every rank owns a slab of the FFT and solves its share */
  AISCI_PPPM_LAYOUT_NODE = 1  /**< one solver per node (its node-local rank 0): the other
                                   ranks of the node hand their charge patches to it and
                                   get the field patches back; the FFTs run across nodes
                                   among the solvers only */
} aisci_pppm_layout;

/** Everything PPPM needs, including the unit factor. Start from aisci_pppm_config_default(). */
typedef struct aisci_pppm_config {
  double box[3][3];  /**< cell vectors a, b, c as rows (length); any non-singular cell */
  int grid[3];       /**< grid points along a, b, c (each >= order); all 0 = choose from
                          accuracy (smallest 2^i 3^j 5^k sizes that reach it) */
  double accuracy;   /**< requested RMS force accuracy (> 0), relative to the force between
                          two unit charges at unit distance (LAMMPS's kspace accuracy):
                          absolute target = accuracy * qqrd2e / length^2. Default 1e-5 */
  double g_ewald;    /**< Ewald parameter g (1/length). 0 = automatic: with beta = 0, from
                          accuracy, cutoff, q2sum and natoms (real-space estimate of Kolafa
                          and Perram); with beta > 0, no real-space split (g = infinity) */
  double cutoff;     /**< real-space cutoff (length), used for automatic g_ewald only */
  int order;         /**< charge-assignment order P, 2..7 (default 5) */
  aisci_pppm_diff diff; /**< default AISCI_PPPM_IK */
  double beta;       /**< Gaussian charge parameter (1/length); 0 = point charges */
  double qqrd2e;     /**< energy = qqrd2e q q / r; > 0 (default 1) */
  double q2sum;      /**< expected sum of q^2 over all atoms (for automatic choices and the
                          error estimate; 0 = unknown) */
  double natoms;     /**< expected total number of charges (same use; 0 = unknown) */
  int fft_measure;   /**< 0: FFTW_ESTIMATE plans (default); 1: FFTW_MEASURE (slower create,
                          possibly faster FFTs, results may differ in the last bits) */
  aisci_pppm_layout layout; /**< default AISCI_PPPM_LAYOUT_RANK. @since 0.1.0 */
  int ranks_per_node; /**< node layout only: 0 = a node is the ranks that share memory
                           (MPI_COMM_TYPE_SHARED); k > 0 = consecutive groups of k ranks of
                           the communicator (pretend nodes, to test the multi-node path on
                           one machine). @since 0.1.0 */
} aisci_pppm_config;

/** What create chose, and the error estimates. */
typedef struct aisci_pppm_info {
  int grid[3];            /**< grid points along a, b, c */
  double g_ewald;         /**< Ewald g (INFINITY when there is no real-space split) */
  double g_eff;           /**< effective reciprocal-space parameter (1/g^2 + 1/beta^2)^-1/2 */
  double kspace_error;    /**< estimated RMS k-space force error, relative (as accuracy),
                               for the cell given to create; -1 if q2sum or natoms is
                               unknown */
  double real_error;      /**< estimated RMS real-space force error at cutoff (Kolafa and
                               Perram), relative; 0 with no real-space part; -1 if unknown */
  int local_planes;       /**< grid planes (along c) this rank owns in the FFT layout */
  int mpi_thread_level;   /**< MPI thread level at create (MPI_Query_thread) */
  int layout;             /**< ::aisci_pppm_layout of the object. @since 0.1.0 */
  int solver;             /**< 1 if this rank runs aisci_pppm_solve()'s grid work (every
                               rank in the rank layout, node-local rank 0 in the node
                               layout). @since 0.1.0 */
  int nodes;              /**< ranks that run the FFTs (nodes in the node layout) */
  int node_ranks;         /**< ranks of this rank's node (1 in the rank layout) */
} aisci_pppm_info;

typedef struct aisci_pppm aisci_pppm;

/** The defaults: unit cubic box of side 1, automatic grid, accuracy 1e-5, automatic g,
 *  order 5, ik, beta 0, qqrd2e 1, fft_measure 0, rank layout. Returned by value, as every
 *  config of the core (aisci_pimd_config_default, aisci_ringlb_config_default).
 *  (Issue 16: before, it filled a caller's struct through a pointer.)
 * @since 0.1.0
 */
AISCI_API aisci_pppm_config aisci_pppm_config_default(void);

/**
 * Check @p cfg, choose g_ewald and the grid where asked, build the influence function
 * and plan the FFTs. Collective over @p comm (duplicated twice: one copy for the atom
 * exchanges, one for the FFTs). Every rank must pass the same configuration.
 * On failure *out is NULL. Errors: AISCI_ERR_ARG (NULL, order outside 2..7, accuracy
 * <= 0, qqrd2e <= 0, singular box, grid < order, negative g/beta/cutoff, automatic
 * g or grid without the data they need, unknown differentiation, a grid above
 * AISCI_PPPM_MAX_GRID or whose estimated memory, AISCI_PPPM_BYTES_PER_POINT per point
 * and rank times the ranks of a node, exceeds the node's physical memory: the message
 * names the mesh), AISCI_ERR_ALLOC,
 * AISCI_ERR_FFT (planning failed), AISCI_ERR_MPI.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_pppm_create(const aisci_pppm_config *cfg, MPI_Comm comm,
                                         aisci_pppm **out);

/** Free everything; NULL is allowed. Not collective (MPI communicators are freed). @since 0.1.0 */
AISCI_API void aisci_pppm_destroy(aisci_pppm *pppm);

/** Fill @p info (see ::aisci_pppm_info). @since 0.1.0 */
AISCI_API aisci_status aisci_pppm_get_info(const aisci_pppm *pppm, aisci_pppm_info *info);

/**
 * Change the cell (same grid and g): recomputes the influence function if the cell
 * differs from the current one. Local (no communication); every rank must pass the same
 * cell. AISCI_ERR_ARG for a singular cell (the old cell is kept), AISCI_ERR_STATE between
 * spread and interpolate.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_pppm_set_box(aisci_pppm *pppm, const double box[3][3]);

/**
 * Step 1: assign the charges of this rank's @p n atoms (positions @p x, n x 3; charges
 * @p q, n) to the part of the grid they touch (the sum over ranks follows in solve()).
 * Collective (error agreement). The object keeps the assignment weights, so
 * interpolate() needs no positions. n may be 0 (x, q may then be NULL).
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_pppm_spread(aisci_pppm *pppm, int n, const double *x,
                                         const double *q);

/**
 * Step 2: the charge patches summed onto the owners of their planes, forward FFT,
 * influence function, energy and virial, inverse FFTs (three for ik, one for ad), the
 * field patches sent back to the ranks whose atoms touch them.
 * Collective on the object's FFT communicator; reads no atom array. In the node layout
 * the solver of each node first receives the patches of its node's ranks (they call
 * solve() or aisci_pppm_hand_off() on their side) and at the end sends them the field
 * patches, the energy and the virial; an error on any solver (for example no memory for
 * the received patches) reaches every rank as the returned status, after all messages
 * of the step have been drained, so that no rank is left waiting. Outputs are global
 * (the same on every rank) and optional (NULL = not wanted): @p energy the reciprocal
 * space energy, @p virial its virial [xx, yy, zz, xy, xz, yz] (energy units, W = sum r F
 * convention, i.e. W = -dE/d(strain)). AISCI_ERR_STATE unless spread() came before.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_pppm_solve(aisci_pppm *pppm, double *energy, double virial[6]);

/**
 * Node layout, on a rank that is not its node's solver: post the sends of the charge
 * patches of spread() to the solver and the receives of the field patches, and return
 * at once; the following aisci_pppm_solve() only waits for them. Lets such a rank do
 * other work while its node's solver (possibly a thread of another rank) runs the solve.
 * Does nothing on a solver rank and in the rank layout. Not collective.
 * AISCI_ERR_STATE unless spread() came before. @since 0.1.0
 */
AISCI_API aisci_status aisci_pppm_hand_off(aisci_pppm *pppm);

/**
 * Step 3: add the reciprocal-space forces q_i E(x_i) of the @p n atoms given to
 * spread() to @p forces (n x 3), from the field patches solve() brought back (per-atom
 * work only). @p q must be the charges given to spread(). Collective (error agreement).
 * AISCI_ERR_STATE unless solve() came before or if n differs from spread()'s.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_pppm_interpolate(aisci_pppm *pppm, int n, const double *q,
                                              double *forces);

/**
 * spread + solve + interpolate. @p box: new cell or NULL to keep the current one.
 * @p forces (n x 3) are added to; @p energy and @p virial are global and optional.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_pppm_compute(aisci_pppm *pppm, int n, const double *x,
                                          const double *q, const double box[3][3],
                                          double *energy, double *forces, double virial[6]);

/**
 * Self and neutralising-background terms the caller adds once (not per rank) to the
 * reciprocal-space energy: -qqrd2e [g_eff/sqrt(pi) q2sum + pi qsum^2 / (2 V g_eff^2)].
 * The background term is the k = 0 convention of Ewald sums (uniform neutralising
 * background; zero for neutral systems). @p qsum and @p q2sum are global sums of q and
 * q^2. @p virial (optional, added to nothing: overwritten) is the background term's
 * virial, E_background on the diagonal.
 * @since 0.1.0
 */
AISCI_API aisci_status aisci_pppm_self_energy(const aisci_pppm *pppm, double qsum, double q2sum,
                                              double *energy, double virial[6]);

#ifdef __cplusplus
}
#endif
#endif
