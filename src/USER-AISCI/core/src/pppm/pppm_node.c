/* PPPM node layout (pppm_internal.h): only node-local rank 0 of each node (the solver)
 * owns a slab. The node's other ranks hand it their charge patches (one header message:
 * rect, plane count and plane list; the data in chunks of at most PPPM_CHUNK doubles), it
 * sums them into one node patch (the covering arcs of their rectangles and the union of
 * their planes), solves with the other solvers (pppm_solve.c) and cuts the field of the
 * node patch back into the ranks' patches (one reply: status, energy, virial, ad
 * self-force coefficients; one data message). */
#include <stdlib.h>
#include <string.h>

#include "pppm_internal.h"

/* Node layout, solver: receive the headers and charge patches of the node's other
 * ranks (node_hdr, node_data; this rank's own patch is copied in as rank 0) and sum them
 * into the node patch. Every message of the step is received even when memory runs out
 * (the chunks then into the drain buffer), so that the other ranks are never left
 * waiting. */
aisci_status pppm_node_gather(aisci_pppm *p)
{
  aisci_status st = AISCI_OK;
  const int S = p->node_size, H = PPPM_HDR_INTS(p), n0 = p->n[0], n1 = p->n[1], n2 = p->n[2];
  int *h0 = p->node_hdr;
  memcpy(h0, p->rect, sizeof(int) * 4);
  h0[4] = p->nslots;
  memcpy(h0 + 5, p->plane_of_slot, sizeof(int) * (size_t) p->nslots);
  for (int r = 1; r < S; r++)
    if (MPI_Recv(p->node_hdr + (size_t) r * H, H, MPI_INT, r, PPPM_TAG_HDR, p->comm_node,
                 MPI_STATUS_IGNORE) != MPI_SUCCESS)
      st = aisci_set_error(AISCI_ERR_MPI, "pppm_solve: receiving a patch header failed");
  /* (a ranks whose header failed to arrive sends no data we could size: MPI errors are
   * fatal under the default handler of the other communicators anyway) */
  if (st != AISCI_OK) return st;
  p->node_off[0] = 0;
  for (int r = 0; r < S; r++) {
    const int *h = p->node_hdr + (size_t) r * H;
    p->node_off[r + 1] = p->node_off[r] + (size_t) h[4] * h[1] * h[3];
  }
  const size_t total = p->node_off[S];
  if (aisci_grow((void **) &p->node_data, &p->node_data_cap, 3 * (int64_t) total, sizeof(double),
                 "pppm_solve", "charge patches") != AISCI_OK)
    st = aisci_set_error(AISCI_ERR_ALLOC,
                         "pppm_solve: out of memory for the %zu charge-patch values of the %d "
                         "ranks of this node",
                         total, S);
  for (int r = 1; r < S; r++) {
    const size_t cnt = p->node_off[r + 1] - p->node_off[r];
    for (int k = 0; k < pppm_nchunks(cnt); k++) {
      const size_t off = (size_t) k * PPPM_CHUNK;
      const size_t len = cnt - off < PPPM_CHUNK ? cnt - off : PPPM_CHUNK;
      int rc = MPI_Recv(st == AISCI_OK ? p->node_data + p->node_off[r] + off : p->drain, (int) len,
                        MPI_DOUBLE, r, PPPM_TAG_CHARGE, p->comm_node, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS && st == AISCI_OK)
        st = aisci_set_error(AISCI_ERR_MPI, "pppm_solve: receiving a charge patch failed");
    }
  }
  if (st != AISCI_OK) return st;
  memcpy(p->node_data, p->planes, sizeof(double) * p->node_off[1]);

  /* the node patch: covering arcs of the ranks' arcs along a and b, union of planes */
  memset(p->touched_a, 0, (size_t) n0);
  memset(p->touched_b, 0, (size_t) n1);
  for (int c = 0; c < n2; c++) p->node_slot_of_plane[c] = -1;
  for (int r = 0; r < S; r++) {
    const int *h = p->node_hdr + (size_t) r * H;
    if (h[4] == 0 || h[1] == 0 || h[3] == 0) continue;
    for (int a = 0; a < h[1]; a++) p->touched_a[pppm_wrap(h[0] + a, n0)] = 1;
    for (int b = 0; b < h[3]; b++) p->touched_b[pppm_wrap(h[2] + b, n1)] = 1;
    for (int s = 0; s < h[4]; s++) p->node_slot_of_plane[h[5 + s]] = 0;
  }
  int *nr = p->node_rect;
  pppm_cover_arc(p->touched_a, n0, &nr[0], &nr[1]);
  pppm_cover_arc(p->touched_b, n1, &nr[2], &nr[3]);
  int ns = 0;
  for (int c = 0; c < n2; c++)
    if (p->node_slot_of_plane[c] == 0) {
      p->node_plane_of_slot[ns] = c;
      p->node_slot_of_plane[c] = ns++;
    }
  p->node_nslots = ns;
  const size_t npatch = (size_t) nr[1] * nr[3];
  if (aisci_grow((void **) &p->node_planes, &p->node_planes_cap, 3 * (int64_t) ns * npatch,
                 sizeof(double), "pppm_solve", "node patch") != AISCI_OK)
    return aisci_set_error(AISCI_ERR_ALLOC,
                           "pppm_solve: out of memory for the node patch (%d planes of %d x %d)",
                           ns, nr[1], nr[3]);
  memset(p->node_planes, 0, sizeof(double) * ns * npatch);
  /* summed in node-rank order */
  for (int r = 0; r < S; r++) {
    const int *h = p->node_hdr + (size_t) r * H;
    const double *src = p->node_data + p->node_off[r];
    const int oa = pppm_wrap(h[0] - nr[0], n0), ob = pppm_wrap(h[2] - nr[2], n1);
    for (int s = 0; s < h[4]; s++) {
      double *dst = p->node_planes + (size_t) p->node_slot_of_plane[h[5 + s]] * npatch;
      for (int b = 0; b < h[3]; b++) {
        /* inside the node patch the rank's rows and columns are contiguous except when
         * the node patch is a whole period (then they may wrap at n) */
        pppm_add_run(dst + (size_t) pppm_wrap(ob + b, n1) * nr[1], oa, h[1], n0, src);
        src += h[1];
      }
    }
  }
  return AISCI_OK;
}

/* Node layout, solver: cut the node patch's field into the ranks' patches; its own into
 * p->planes, the others' sent with the reply (status, energy, virial, ad self-force).
 * With st != OK only the reply and an empty field message are sent. */
aisci_status pppm_node_scatter(aisci_pppm *p, aisci_status st)
{
  const int S = p->node_size, H = PPPM_HDR_INTS(p), n0 = p->n[0], n1 = p->n[1], nc = p->ncomp;
  const int *nr = p->node_rect;
  const size_t npatch = (size_t) nr[1] * nr[3];
  /* the reply is sent without waiting for each rank in turn: a rank still busy (its
   * network) must not hold up the fields of the others */
  double *reply = p->node_reply;
  reply[0] = (double) st;
  reply[1] = p->energy;
  memcpy(reply + 2, p->virial, sizeof(double) * 6);
  memcpy(reply + 8, p->sf_coef, sizeof(double) * 18);
  aisci_status out = st;
  int nreq = 0, rc = MPI_SUCCESS;
  for (int r = 0; r < S; r++) {
    const int *h = p->node_hdr + (size_t) r * H;
    const size_t patch = (size_t) h[1] * h[3];
    /* rank r's fields, [slot][component][b][a], into node_data (its charges are spent) */
    double *dst = r == 0 ? p->planes : p->node_data + nc * p->node_off[r], *d = dst;
    const int oa = pppm_wrap(h[0] - nr[0], n0), ob = pppm_wrap(h[2] - nr[2], n1);
    for (int s = 0; st == AISCI_OK && s < h[4]; s++) {
      const double *src = p->node_planes + (size_t) p->node_slot_of_plane[h[5 + s]] * nc * npatch;
      for (int c = 0; c < nc; c++, src += npatch)
        for (int b = 0; b < h[3]; b++) {
          pppm_copy_run(d, src + (size_t) pppm_wrap(ob + b, n1) * nr[1], oa, h[1], n0);
          d += h[1];
        }
    }
    if (r == 0) continue;
    const int cnt = st == AISCI_OK ? (int) (nc * h[4] * patch) : 0;
    if (rc == MPI_SUCCESS)
      rc = MPI_Isend(reply, 26, MPI_DOUBLE, r, PPPM_TAG_REPLY, p->comm_node, &p->node_req[nreq++]);
    if (rc == MPI_SUCCESS)
      rc = MPI_Isend(dst, cnt, MPI_DOUBLE, r, PPPM_TAG_FIELD, p->comm_node, &p->node_req[nreq++]);
  }
  if (MPI_Waitall(nreq, p->node_req, MPI_STATUSES_IGNORE) != MPI_SUCCESS || rc != MPI_SUCCESS)
    if (out == AISCI_OK)
      out = aisci_set_error(AISCI_ERR_MPI, "pppm_solve: sending a field patch failed");
  return out;
}

aisci_status aisci_pppm_hand_off(aisci_pppm *p)
{
  if (!p) return aisci_set_error(AISCI_ERR_ARG, "pppm_hand_off: pppm is NULL");
  if (p->state != PPPM_SPREAD)
    return aisci_set_error(AISCI_ERR_STATE, "pppm_hand_off: spread must come first");
  if (p->solver || p->handed) return AISCI_OK;
  const size_t patch = (size_t) p->rect[1] * p->rect[3];
  const int ns = p->nslots;
  memcpy(p->hdr_out, p->rect, sizeof(int) * 4);
  p->hdr_out[4] = ns;
  memcpy(p->hdr_out + 5, p->plane_of_slot, sizeof(int) * (size_t) ns);
  /* the receive buffer and the requests were sized in spread (agreed there), so nothing
   * here can fail short of MPI itself */
  const size_t cnt = ns * patch;
  int rc =
      MPI_Isend(p->hdr_out, PPPM_HDR_INTS(p), MPI_INT, 0, PPPM_TAG_HDR, p->comm_node, &p->req[0]);
  if (rc == MPI_SUCCESS)
    rc = MPI_Irecv(p->reply, 26, MPI_DOUBLE, 0, PPPM_TAG_REPLY, p->comm_node, &p->req[1]);
  if (rc == MPI_SUCCESS)
    rc = MPI_Irecv(p->recvbuf, (int) (p->ncomp * cnt), MPI_DOUBLE, 0, PPPM_TAG_FIELD, p->comm_node,
                   &p->req[2]);
  for (int k = 0; rc == MPI_SUCCESS && k < pppm_nchunks(cnt); k++) {
    const size_t off = (size_t) k * PPPM_CHUNK;
    rc = MPI_Isend(p->planes + off, (int) (cnt - off < PPPM_CHUNK ? cnt - off : PPPM_CHUNK),
                   MPI_DOUBLE, 0, PPPM_TAG_CHARGE, p->comm_node, &p->req[3 + k]);
  }
  if (rc != MPI_SUCCESS)
    return aisci_set_error(AISCI_ERR_MPI, "pppm_hand_off: posting the patch messages failed");
  p->nreq = 3 + pppm_nchunks(cnt);
  p->handed = 1;
  return AISCI_OK;
}
