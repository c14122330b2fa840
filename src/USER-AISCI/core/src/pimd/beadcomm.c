/* Inter-partition bead exchange: column Allgatherv plus planned point-to-point fix-ups. */
#define _POSIX_C_SOURCE 200809L
#include "aisci_testing/beadcomm.h"

#include <time.h>
#include <unistd.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct aisci_beadcomm {
  MPI_Comm universe;       /* duplicate of the caller's universe */
  MPI_Comm column;         /* ranks with the same world rank, ordered by bead */
  int nbeads, bead, multi; /* multi: more than one rank per partition */
  int urank, usize;

  int n; /* local atoms */
  int64_t *tags;
  int64_t tags_cap;
  int dirty;
  long nrebuilds;

  int *counts, *displs;   /* column: atoms per bead, offsets */
  int *vcounts, *vdispls; /* column: value counts for the data Allgatherv */
  int *perm;              /* nbeads x n: position of local atom i in bead j's list, -1 if absent */
  int64_t perm_cap;
  double *recv; /* column receive buffer */
  int64_t recv_cap;
  int fast;        /* one rank per partition, equal atom counts: one collective per call */
  int polite;      /* wait for collectives by sleeping, not spinning (oversubscribed nodes) */
  double *fastbuf; /* send buffer of the one-collective path: values + change flag */
  int64_t fast_cap;

  /* fix-up plan (multi only) */
  int any_fixups; /* universe-wide: some rank needs fix-ups */
  int nsend, nrecv;
  int *send_idx; /* local atom indices, grouped by destination rank */
  int64_t send_idx_cap;
  int *send_counts, *send_displs, *recv_counts, *recv_displs;
  int *recv_slot; /* nrecv pairs (bead, local atom) */
  int64_t recv_slot_cap;
  double *sendbuf, *recvbuf2;
  int64_t sendbuf_cap, recvbuf2_cap;

  /* the last failed plan: an atom that one partition lacks (tag, partition), or -1 */
  int64_t missing_tag;
  int missing_partition;
};

/* ---- tag -> local index hash (open addressing) ---- */
typedef struct {
  int64_t *keys;
  int *vals;
  size_t mask;
} taghash;

/* Returns -1 when out of memory (h freed), else 0; dup (if not NULL) gets the positions
 * of the first repeated tag (earlier, later), or -1. A repeated tag is not inserted. */
static int taghash_build(taghash *h, int n, const int64_t *tags, int dup[2])
{
  size_t size = 16;
  while (size < 2 * (size_t) n) size <<= 1;
  h->keys = malloc(size * sizeof(int64_t));
  h->vals = malloc(size * sizeof(int));
  if (dup) dup[0] = dup[1] = -1;
  if (!h->keys || !h->vals) {
    free(h->keys);
    free(h->vals);
    h->keys = NULL;
    h->vals = NULL;
    return -1;
  }
  h->mask = size - 1;
  for (size_t i = 0; i < size; i++) h->vals[i] = -1;
  for (int i = 0; i < n; i++) {
    size_t s = ((uint64_t) tags[i] * 0x9E3779B97F4A7C15ull) & h->mask;
    while (h->vals[s] >= 0 && h->keys[s] != tags[i]) s = (s + 1) & h->mask;
    if (h->vals[s] >= 0) {
      if (dup && dup[1] < 0) {
        dup[0] = h->vals[s];
        dup[1] = i;
      }
      continue;
    }
    h->keys[s] = tags[i];
    h->vals[s] = i;
  }
  return 0;
}

static int taghash_find(const taghash *h, int64_t tag)
{
  size_t s = ((uint64_t) tag * 0x9E3779B97F4A7C15ull) & h->mask;
  while (h->vals[s] >= 0) {
    if (h->keys[s] == tag) return h->vals[s];
    s = (s + 1) & h->mask;
  }
  return -1;
}

static void taghash_free(taghash *h)
{
  free(h->keys);
  free(h->vals);
}

/* "beadcomm: <what> failed (MPI error rc)" (internal.h) */
static aisci_status mpi_fail(int rc, const char *what)
{
  return aisci_mpi_fail(rc, "beadcomm", what);
}

/* Complete a non-blocking collective. On a node with more ranks than cores, ranks that
 * wait spinning take CPU time from the ranks still computing their bead's forces, so
 * there the wait polls with short sleeps instead. */
static int finish(const aisci_beadcomm *bc, MPI_Request *req)
{
  if (!bc->polite) return MPI_Wait(req, MPI_STATUS_IGNORE);
  for (;;) {
    int done = 0;
    int rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || done) return rc;
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
  }
}

aisci_status aisci_beadcomm_create(MPI_Comm universe, MPI_Comm world, int nbeads, int bead,
                                   aisci_beadcomm **out)
{
  if (!out) return aisci_set_error(AISCI_ERR_ARG, "beadcomm_create: output pointer is NULL");
  *out = NULL;
  if (nbeads < 1 || bead < 0 || bead >= nbeads)
    return aisci_set_error(AISCI_ERR_ARG, "beadcomm_create: bead %d outside 0..%d", bead,
                           nbeads - 1);
  int wrank, wsize, urank, usize;
  MPI_Comm_rank(world, &wrank);
  MPI_Comm_size(world, &wsize);
  MPI_Comm_rank(universe, &urank);
  MPI_Comm_size(universe, &usize);
  int range[2] = {wsize, -wsize}, red[2];
  int rc = MPI_Allreduce(range, red, 2, MPI_INT, MPI_MIN, universe);
  if (rc != MPI_SUCCESS) return mpi_fail(rc, "Allreduce of partition sizes");
  if (red[0] != -red[1])
    return aisci_set_error(AISCI_ERR_MPI,
                           "all partitions must have the same number of ranks (found %d and %d)",
                           red[0], -red[1]);
  if (usize != nbeads * wsize)
    return aisci_set_error(AISCI_ERR_MPI,
                           "%d beads need %d partitions of %d ranks, but the universe has %d ranks",
                           nbeads, nbeads, wsize, usize);

  aisci_beadcomm *bc = calloc(1, sizeof(*bc));
  if (!bc) return aisci_set_error(AISCI_ERR_ALLOC, "beadcomm_create: out of memory");
  bc->nbeads = nbeads;
  bc->bead = bead;
  bc->multi = wsize > 1;
  bc->urank = urank;
  bc->usize = usize;
  bc->dirty = 1;
  bc->missing_tag = -1;
  bc->missing_partition = -1;
  MPI_Comm_dup(universe, &bc->universe);
  {
    MPI_Comm node;
    int local = 1;
    if (MPI_Comm_split_type(universe, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
      MPI_Comm_size(node, &local);
      MPI_Comm_free(&node);
    }
    const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    bc->polite = ncpu > 0 && local > ncpu;
  }
  MPI_Comm_split(universe, wrank, bead, &bc->column);
  int csize;
  MPI_Comm_size(bc->column, &csize);
  int *beads = malloc(sizeof(int) * csize);
  bc->counts = calloc(nbeads, sizeof(int));
  bc->displs = calloc(nbeads, sizeof(int));
  bc->vcounts = calloc(nbeads, sizeof(int));
  bc->vdispls = calloc(nbeads, sizeof(int));
  bc->send_counts = calloc(usize, sizeof(int));
  bc->send_displs = calloc(usize, sizeof(int));
  bc->recv_counts = calloc(usize, sizeof(int));
  bc->recv_displs = calloc(usize, sizeof(int));
  if (!beads || !bc->counts || !bc->displs || !bc->vcounts || !bc->vdispls || !bc->send_counts ||
      !bc->send_displs || !bc->recv_counts || !bc->recv_displs) {
    free(beads);
    aisci_beadcomm_destroy(bc);
    return aisci_set_error(AISCI_ERR_ALLOC, "beadcomm_create: out of memory");
  }
  MPI_Allgather(&bead, 1, MPI_INT, beads, 1, MPI_INT, bc->column);
  int ok = (csize == nbeads);
  for (int j = 0; ok && j < csize; j++) ok = (beads[j] == j);
  free(beads);
  int allok;
  MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, universe);
  if (!allok) {
    aisci_beadcomm_destroy(bc);
    return aisci_set_error(AISCI_ERR_MPI, "bead indices are not one per partition 0..%d",
                           nbeads - 1);
  }
  *out = bc;
  return AISCI_OK;
}

void aisci_beadcomm_destroy(aisci_beadcomm *bc)
{
  if (!bc) return;
  if (bc->column != MPI_COMM_NULL && bc->column) MPI_Comm_free(&bc->column);
  if (bc->universe != MPI_COMM_NULL && bc->universe) MPI_Comm_free(&bc->universe);
  free(bc->tags);
  free(bc->counts);
  free(bc->displs);
  free(bc->vcounts);
  free(bc->vdispls);
  free(bc->perm);
  free(bc->recv);
  free(bc->fastbuf);
  free(bc->send_idx);
  free(bc->send_counts);
  free(bc->send_displs);
  free(bc->recv_counts);
  free(bc->recv_displs);
  free(bc->recv_slot);
  free(bc->sendbuf);
  free(bc->recvbuf2);
  free(bc);
}

aisci_status aisci_beadcomm_set_atoms(aisci_beadcomm *bc, int n, const int64_t *tags)
{
  if (!bc || n < 0 || (n > 0 && !tags))
    return aisci_set_error(AISCI_ERR_ARG, "beadcomm_set_atoms: invalid arguments (n = %d)", n);
  /* a repeated tag would silently get another atom's values: reject it (O(n), like the
   * table the next plan builds anyway); the previous atom set stays in place */
  taghash h;
  int dup[2];
  if (taghash_build(&h, n, tags, dup))
    return aisci_set_error(AISCI_ERR_ALLOC, "beadcomm_set_atoms: out of memory for %d tags", n);
  taghash_free(&h);
  if (dup[1] >= 0)
    return aisci_set_error(
        AISCI_ERR_ARG,
        "beadcomm_set_atoms: atom tag %lld appears twice in this rank's list (positions %d and %d)",
        (long long) tags[dup[1]], dup[0], dup[1]);
  if (aisci_grow((void **) &bc->tags, &bc->tags_cap, n, sizeof(int64_t), "beadcomm_set_atoms",
                 "tags") != AISCI_OK)
    return aisci_set_error(AISCI_ERR_ALLOC, "beadcomm_set_atoms: out of memory for %d atoms", n);
  if (n) memcpy(bc->tags, tags, sizeof(int64_t) * n);
  bc->n = n;
  bc->dirty = 1;
  return AISCI_OK;
}

/* Every rank learns whether some rank failed and, of the atoms found missing anywhere,
 * the one with the smallest (tag, partition): one Allreduce over the universe. Every rank
 * then returns the same status and message, so callers can stop all ranks together. */
static aisci_status agree_on_plan(aisci_beadcomm *bc, aisci_status st, int64_t miss_tag,
                                  int miss_part)
{
  const int64_t none = INT64_MAX;
  int64_t code = miss_tag >= 0 ? miss_tag * bc->nbeads + miss_part : none;
  int64_t in[2] = {st != AISCI_OK, -code}, out[2];
  int rc = MPI_Allreduce(in, out, 2, MPI_INT64_T, MPI_MAX, bc->universe);
  if (rc != MPI_SUCCESS && st == AISCI_OK) return mpi_fail(rc, "Allreduce of the plan status");
  bc->missing_tag = -1;
  bc->missing_partition = -1;
  if (rc == MPI_SUCCESS && -out[1] != none) {
    bc->missing_tag = -out[1] / bc->nbeads;
    bc->missing_partition = (int) (-out[1] % bc->nbeads);
    return aisci_set_error(AISCI_ERR_MISSING, "atom tag %lld is not present in partition %d",
                           (long long) bc->missing_tag, bc->missing_partition);
  }
  if (st) return st;
  if (out[0]) return aisci_set_error(AISCI_ERR_MPI, "bead exchange failed on another rank");
  return AISCI_OK;
}

/* Rebuild the column permutation and, with several ranks per partition, the fix-up plan. */
static aisci_status rebuild(aisci_beadcomm *bc)
{
  const int P = bc->nbeads, n = bc->n;
  int rc;
  bc->nrebuilds++;
  rc = MPI_Allgather(&bc->n, 1, MPI_INT, bc->counts, 1, MPI_INT, bc->column);
  if (rc) return mpi_fail(rc, "Allgather of atom counts");
  size_t total = 0;
  bc->fast = !bc->multi;
  for (int j = 0; j < P; j++) {
    bc->displs[j] = (int) total;
    total += bc->counts[j];
    if (bc->counts[j] != bc->counts[0]) bc->fast = 0;
  }
  int64_t *alltags = malloc(sizeof(int64_t) * (total ? total : 1));
  if (!alltags ||
      aisci_grow((void **) &bc->perm, &bc->perm_cap, (int64_t) P * n, sizeof(int), "beadcomm",
                 "the bead permutation") != AISCI_OK) {
    free(alltags);
    return aisci_set_error(AISCI_ERR_ALLOC, "beadcomm: out of memory for %zu tags", total);
  }
  int *perm = bc->perm;
  rc = MPI_Allgatherv(bc->tags, n, MPI_INT64_T, alltags, bc->counts, bc->displs, MPI_INT64_T,
                      bc->column);
  if (rc) {
    free(alltags);
    return mpi_fail(rc, "Allgatherv of atom tags");
  }
  taghash h;
  if (taghash_build(&h, n, bc->tags, NULL)) {
    free(alltags);
    return aisci_set_error(AISCI_ERR_ALLOC, "beadcomm: out of memory for the tag table");
  }
  for (size_t a = 0; a < (size_t) P * n; a++) perm[a] = -1;
  for (int j = 0; j < P; j++) {
    for (int p = 0; p < bc->counts[j]; p++) {
      int i = taghash_find(&h, alltags[bc->displs[j] + p]);
      if (i >= 0) perm[(size_t) j * n + i] = p;
    }
  }
  free(alltags);

  /* missing (tag, bead) pairs */
  int nmiss = 0;
  for (int j = 0; j < P; j++)
    if (j != bc->bead)
      for (int i = 0; i < n; i++) nmiss += perm[(size_t) j * n + i] < 0;

  aisci_status st = AISCI_OK;
  if (!bc->multi) {
    int64_t miss_tag = -1;
    int miss_part = -1;
    for (int j = 0; j < P && miss_tag < 0; j++)
      for (int i = 0; i < n; i++)
        if (j != bc->bead && perm[(size_t) j * n + i] < 0) {
          miss_tag = bc->tags[i];
          miss_part = j;
          break;
        }
    taghash_free(&h);
    bc->any_fixups = 0;
    bc->nrecv = bc->nsend = 0;
    /* every rank must agree: a rank that returned OK here would go on to the data
     * Allgatherv while the failing ranks do not (the column is the universe here) */
    return agree_on_plan(bc, st, miss_tag, miss_part);
  }

  /* universe-wide request list: pairs (tag, bead) */
  int64_t miss_tag = -1;
  int miss_part = -1;
  int *mcounts = malloc(sizeof(int) * bc->usize), *mdispls = malloc(sizeof(int) * bc->usize);
  int64_t *myreq = malloc(sizeof(int64_t) * 2 * (nmiss ? nmiss : 1));
  int *myslot = malloc(sizeof(int) * 2 * (nmiss ? nmiss : 1));
  if (!mcounts || !mdispls || !myreq || !myslot) {
    free(mcounts);
    free(mdispls);
    free(myreq);
    free(myslot);
    taghash_free(&h);
    return aisci_set_error(AISCI_ERR_ALLOC, "beadcomm: out of memory for fix-up requests");
  }
  int m = 0;
  for (int j = 0; j < P; j++)
    if (j != bc->bead)
      for (int i = 0; i < n; i++)
        if (perm[(size_t) j * n + i] < 0) {
          myreq[2 * m] = bc->tags[i];
          myreq[2 * m + 1] = j;
          myslot[2 * m] = j;
          myslot[2 * m + 1] = i;
          m++;
        }
  int two_m = 2 * nmiss;
  MPI_Allgather(&two_m, 1, MPI_INT, mcounts, 1, MPI_INT, bc->universe);
  size_t rtotal = 0;
  for (int r = 0; r < bc->usize; r++) {
    mdispls[r] = (int) rtotal;
    rtotal += mcounts[r];
  }
  bc->any_fixups = rtotal > 0;
  int64_t *allreq = malloc(sizeof(int64_t) * (rtotal ? rtotal : 1));
  if (!allreq) {
    free(mcounts);
    free(mdispls);
    free(myreq);
    free(myslot);
    taghash_free(&h);
    return aisci_set_error(AISCI_ERR_ALLOC, "beadcomm: out of memory for fix-up requests");
  }
  rc = MPI_Allgatherv(myreq, two_m, MPI_INT64_T, allreq, mcounts, mdispls, MPI_INT64_T,
                      bc->universe);
  if (rc) st = mpi_fail(rc, "Allgatherv of fix-up requests");

  /* serve requests for my bead: per destination, the local indices and request numbers */
  int nsend = 0;
  for (int r = 0; r < bc->usize; r++) bc->send_counts[r] = 0;
  for (int r = 0; r < bc->usize && !st; r++)
    for (int q = 0; q < mcounts[r] / 2; q++) {
      const int64_t *req = allreq + mdispls[r] + 2 * q;
      if (req[1] == bc->bead && taghash_find(&h, req[0]) >= 0) {
        bc->send_counts[r]++;
        nsend++;
      }
    }
  aisci_status grown = aisci_grow((void **) &bc->send_idx, &bc->send_idx_cap, nsend, sizeof(int),
                                  "beadcomm", "the fix-up plan");
  int *send_idx = bc->send_idx;
  int *send_req = malloc(sizeof(int) * (nsend ? nsend : 1));
  if (grown != AISCI_OK || !send_req)
    st = aisci_set_error(AISCI_ERR_ALLOC, "beadcomm: out of memory for the fix-up plan");
  int s = 0;
  for (int r = 0; r < bc->usize && !st; r++) {
    bc->send_displs[r] = s;
    for (int q = 0; q < mcounts[r] / 2; q++) {
      const int64_t *req = allreq + mdispls[r] + 2 * q;
      int i;
      if (req[1] == bc->bead && (i = taghash_find(&h, req[0])) >= 0) {
        send_idx[s] = i;
        send_req[s] = q;
        s++;
      }
    }
  }
  bc->nsend = nsend;
  free(allreq);
  taghash_free(&h);
  if (!st) {
    MPI_Alltoall(bc->send_counts, 1, MPI_INT, bc->recv_counts, 1, MPI_INT, bc->universe);
    int nrecv = 0;
    for (int r = 0; r < bc->usize; r++) {
      bc->recv_displs[r] = nrecv;
      nrecv += bc->recv_counts[r];
    }
    int *got = malloc(sizeof(int) * (nrecv ? nrecv : 1));
    if (!got ||
        aisci_grow((void **) &bc->recv_slot, &bc->recv_slot_cap, 2 * (int64_t) nrecv, sizeof(int),
                   "beadcomm", "the fix-up plan") != AISCI_OK) {
      free(got);
      st = aisci_set_error(AISCI_ERR_ALLOC, "beadcomm: out of memory for the fix-up plan");
    } else {
      int *slot = bc->recv_slot;
      MPI_Alltoallv(send_req, bc->send_counts, bc->send_displs, MPI_INT, got, bc->recv_counts,
                    bc->recv_displs, MPI_INT, bc->universe);
      for (int a = 0; a < nrecv; a++) {
        slot[2 * a] = myslot[2 * got[a]];
        slot[2 * a + 1] = myslot[2 * got[a] + 1];
      }
      bc->nrecv = nrecv;
      /* a request nobody served: that atom is in no rank of that partition */
      if (nrecv != nmiss) {
        char *served = calloc(nmiss ? nmiss : 1, 1);
        if (served) {
          for (int a = 0; a < nrecv; a++) served[got[a]] = 1;
          for (int k = 0; k < nmiss && miss_tag < 0; k++)
            if (!served[k]) {
              miss_tag = myreq[2 * k];
              miss_part = (int) myreq[2 * k + 1];
            }
          free(served);
        }
        st = aisci_set_error(AISCI_ERR_MISSING,
                             "%d of %d atoms needed from other beads were found in no partition",
                             nmiss - nrecv, nmiss);
      }
      free(got);
    }
  }
  free(send_req);
  free(mcounts);
  free(mdispls);
  free(myreq);
  free(myslot);
  /* every rank must agree on success before the plan is used */
  return agree_on_plan(bc, st, miss_tag, miss_part);
}

/* rebuild() after a change in some partition; a failed plan leaves the exchange marked
 * dirty, so that the next call plans again rather than use a broken permutation. */
static aisci_status replan(aisci_beadcomm *bc)
{
  aisci_status st = rebuild(bc);
  bc->dirty = st != AISCI_OK;
  return st;
}

static aisci_status exchange_values(aisci_beadcomm *bc, int width, const double *mine, double *all);

/* One rank per partition and the same number of atoms everywhere (every partition holds
 * every atom): a single Allgather carries the values and each rank's change flag; when a
 * flag is set the tags are exchanged (a rebuild) and the values just received, which the
 * senders packed in their current order, are placed with the new permutation. So the
 * usual step costs one collective. The block size is the count agreed at the last
 * rebuild, known to every rank; a rank whose atom count changed pads or truncates its
 * block and raises its flag, and if the rebuild shows changed counts every rank repeats
 * the exchange the general way. */
static aisci_status allgather_fast(aisci_beadcomm *bc, int width, const double *mine, double *all,
                                   int flag, int range[2])
{
  const int P = bc->nbeads, n = bc->n, c_old = bc->counts[0];
  /* per rank: values, the caller's flag, the change flag */
  const size_t block = (size_t) c_old * width + 2;
  if (aisci_grow((void **) &bc->fastbuf, &bc->fast_cap, (int64_t) block, sizeof(double), "beadcomm",
                 "bead values") != AISCI_OK)
    return aisci_set_error(AISCI_ERR_ALLOC, "beadcomm: out of memory for %zu values", block);
  if (aisci_grow((void **) &bc->recv, &bc->recv_cap, (int64_t) (block * P), sizeof(double),
                 "beadcomm", "bead values") != AISCI_OK)
    return aisci_set_error(AISCI_ERR_ALLOC, "beadcomm: out of memory for %zu values", block * P);
  const int ncopy = n < c_old ? n : c_old;
  if (ncopy) memcpy(bc->fastbuf, mine, sizeof(double) * (size_t) ncopy * width);
  for (size_t a = (size_t) ncopy * width; a + 2 < block; a++) bc->fastbuf[a] = 0.0;
  bc->fastbuf[block - 2] = (double) flag;
  bc->fastbuf[block - 1] = (bc->dirty || n != c_old) ? 1.0 : 0.0;
  MPI_Request req;
  int rc = MPI_Iallgather(bc->fastbuf, (int) block, MPI_DOUBLE, bc->recv, (int) block, MPI_DOUBLE,
                          bc->column, &req);
  if (rc == MPI_SUCCESS) rc = finish(bc, &req);
  if (rc) return mpi_fail(rc, "Allgather of bead values");
  int anydirty = 0;
  range[0] = range[1] = flag;
  for (int j = 0; j < P; j++) {
    const int f = (int) bc->recv[(size_t) j * block + block - 2];
    if (f < range[0]) range[0] = f;
    if (f > range[1]) range[1] = f;
    anydirty |= bc->recv[(size_t) j * block + block - 1] != 0.0;
  }
  if (anydirty) {
    aisci_status st = replan(bc);
    if (st) return st;
    int redo = !bc->fast;
    for (int j = 0; j < P; j++) redo |= bc->counts[j] != c_old;
    if (redo) return exchange_values(bc, width, mine, all);
  }
  for (int j = 0; j < P; j++) {
    double *dst = all + (size_t) j * n * width;
    if (j == bc->bead) {
      memcpy(dst, mine, sizeof(double) * (size_t) n * width);
      continue;
    }
    const double *src = bc->recv + (size_t) j * block;
    const int *perm = bc->perm + (size_t) j * n;
    for (int i = 0; i < n; i++)
      memcpy(dst + (size_t) i * width, src + (size_t) perm[i] * width, sizeof(double) * width);
  }
  return AISCI_OK;
}

aisci_status aisci_beadcomm_allgather(aisci_beadcomm *bc, int width, const double *mine,
                                      double *all)
{
  return aisci_beadcomm_allgather_flag(bc, width, mine, all, 0, NULL, NULL);
}

aisci_status aisci_beadcomm_allgather_flag(aisci_beadcomm *bc, int width, const double *mine,
                                           double *all, int flag, int *flag_min, int *flag_max)
{
  if (!bc || width < 1 || (bc->n > 0 && (!mine || !all)))
    return aisci_set_error(AISCI_ERR_ARG, "beadcomm_allgather: invalid arguments (width %d)",
                           width);
  int range[2] = {flag, flag};
  if (bc->fast) {
    aisci_status st = allgather_fast(bc, width, mine, all, flag, range);
    if (flag_min) *flag_min = range[0];
    if (flag_max) *flag_max = range[1];
    return st;
  }
  /* has any atom set changed? (and the range of the flags) with one rank per partition
   * the column is the universe */
  int in[3] = {bc->dirty, flag, -flag}, out[3];
  MPI_Request req;
  int rc =
      MPI_Iallreduce(in, out, 3, MPI_INT, MPI_MAX, bc->multi ? bc->universe : bc->column, &req);
  if (rc == MPI_SUCCESS) rc = finish(bc, &req);
  if (rc) return mpi_fail(rc, "Allreduce of the change flag");
  const int anydirty = out[0];
  if (flag_min) *flag_min = -out[2];
  if (flag_max) *flag_max = out[1];
  if (anydirty) {
    aisci_status st = replan(bc);
    if (st) return st;
  }
  return exchange_values(bc, width, mine, all);
}

/* The general exchange with the current plan: column Allgatherv plus fix-ups. */
static aisci_status exchange_values(aisci_beadcomm *bc, int width, const double *mine, double *all)
{
  const int P = bc->nbeads, n = bc->n;
  int rc;
  size_t total = 0;
  for (int j = 0; j < P; j++) {
    bc->vcounts[j] = bc->counts[j] * width;
    bc->vdispls[j] = (int) total;
    total += (size_t) bc->vcounts[j];
  }
  if (aisci_grow((void **) &bc->recv, &bc->recv_cap, (int64_t) total, sizeof(double), "beadcomm",
                 "bead values") != AISCI_OK)
    return aisci_set_error(AISCI_ERR_ALLOC, "beadcomm: out of memory for %zu values", total);
  MPI_Request req;
  rc = MPI_Iallgatherv(mine, n * width, MPI_DOUBLE, bc->recv, bc->vcounts, bc->vdispls, MPI_DOUBLE,
                       bc->column, &req);
  if (rc == MPI_SUCCESS) rc = finish(bc, &req);
  if (rc) return mpi_fail(rc, "Allgatherv of bead values");
  for (int j = 0; j < P; j++) {
    double *dst = all + (size_t) j * n * width;
    if (j == bc->bead) {
      memcpy(dst, mine, sizeof(double) * (size_t) n * width);
      continue;
    }
    const double *src = bc->recv + bc->vdispls[j];
    const int *perm = bc->perm + (size_t) j * n;
    for (int i = 0; i < n; i++) {
      const int p = perm[i];
      if (p >= 0)
        memcpy(dst + (size_t) i * width, src + (size_t) p * width, sizeof(double) * width);
    }
  }
  if (bc->multi && bc->any_fixups) {
    size_t need = (size_t) (bc->nsend > bc->nrecv ? bc->nsend : bc->nrecv) * width;
    if (aisci_grow((void **) &bc->sendbuf, &bc->sendbuf_cap, (int64_t) need, sizeof(double),
                   "beadcomm", "fix-ups") != AISCI_OK ||
        aisci_grow((void **) &bc->recvbuf2, &bc->recvbuf2_cap, (int64_t) need, sizeof(double),
                   "beadcomm", "fix-ups") != AISCI_OK)
      return aisci_set_error(AISCI_ERR_ALLOC, "beadcomm: out of memory for fix-ups");
    for (int s = 0; s < bc->nsend; s++)
      memcpy(bc->sendbuf + (size_t) s * width, mine + (size_t) bc->send_idx[s] * width,
             sizeof(double) * width);
    int *sc = malloc(sizeof(int) * 4 * bc->usize);
    if (!sc) return aisci_set_error(AISCI_ERR_ALLOC, "beadcomm: out of memory");
    int *sd = sc + bc->usize, *rcn = sd + bc->usize, *rd = rcn + bc->usize;
    for (int r = 0; r < bc->usize; r++) {
      sc[r] = bc->send_counts[r] * width;
      sd[r] = bc->send_displs[r] * width;
      rcn[r] = bc->recv_counts[r] * width;
      rd[r] = bc->recv_displs[r] * width;
    }
    MPI_Request req2;
    rc = MPI_Ialltoallv(bc->sendbuf, sc, sd, MPI_DOUBLE, bc->recvbuf2, rcn, rd, MPI_DOUBLE,
                        bc->universe, &req2);
    if (rc == MPI_SUCCESS) rc = finish(bc, &req2);
    free(sc);
    if (rc) return mpi_fail(rc, "Alltoallv of fix-up values");
    for (int a = 0; a < bc->nrecv; a++) {
      const int j = bc->recv_slot[2 * a], i = bc->recv_slot[2 * a + 1];
      memcpy(all + ((size_t) j * n + i) * width, bc->recvbuf2 + (size_t) a * width,
             sizeof(double) * width);
    }
  }
  return AISCI_OK;
}

aisci_status aisci_beadcomm_sum_universe(aisci_beadcomm *bc, int n, const double *in, double *out)
{
  if (!bc || n < 0)
    return aisci_set_error(AISCI_ERR_ARG, "beadcomm_sum_universe: invalid arguments (n = %d)", n);
  if (n > 0 && (!in || !out))
    return aisci_set_error(AISCI_ERR_ARG, "beadcomm_sum_universe: %s array is NULL",
                           !in ? "input" : "output");
  MPI_Request req;
  int rc = MPI_Iallreduce(in, out, n, MPI_DOUBLE, MPI_SUM, bc->universe, &req);
  if (rc == MPI_SUCCESS) rc = finish(bc, &req);
  return mpi_fail(rc, "Allreduce");
}

int aisci_beadcomm_nfixups(const aisci_beadcomm *bc)
{
  return bc ? bc->nrecv : 0;
}
long aisci_beadcomm_nrebuilds(const aisci_beadcomm *bc)
{
  return bc ? bc->nrebuilds : 0;
}

int aisci_beadcomm_missing(const aisci_beadcomm *bc, int64_t *tag, int *partition)
{
  if (!bc || bc->missing_tag < 0) return 0;
  if (tag) *tag = bc->missing_tag;
  if (partition) *partition = bc->missing_partition;
  return 1;
}

