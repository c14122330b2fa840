/* PPPM charge assignment and field interpolation (pppm_internal.h): spread puts each
 * atom's charge on the order^3 grid points around it with B-spline weights, into the part
 * of the grid this rank's atoms touch (a set of planes along c, each cut to one periodic
 * rectangle in (a, b)); interpolate brings the field of those points back to the atoms
 * with the same weights (ik: E; ad: the gradient of the potential and the removal of the
 * mean self-force). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pppm_internal.h"

void pppm_cover_arc(const unsigned char *touched, int n, int *first, int *len)
{
  int any = 0;
  for (int i = 0; i < n; i++) any |= touched[i];
  if (!any) {
    *first = 0;
    *len = 0;
    return;
  }
  int best = 0, best_end = -1, run = 0;
  /* two sweeps so that a gap across n-1 -> 0 is seen whole */
  for (int k = 0; k < 2 * n; k++) {
    if (!touched[k % n]) {
      run++;
      if (run > best && run <= n) {
        best = run;
        best_end = k % n;
      }
    } else {
      run = 0;
    }
  }
  if (best == 0) {
    *first = 0;
    *len = n;
  } else {
    *first = (best_end + 1) % n;
    *len = n - best;
  }
}

aisci_status aisci_pppm_spread(aisci_pppm *p, int n, const double *x, const double *q)
{
  if (!p) return aisci_set_error(AISCI_ERR_ARG, "pppm_spread: pppm is NULL");
  if (p->state != PPPM_IDLE)
    return aisci_set_error(AISCI_ERR_STATE, "pppm_spread: previous step not interpolated");
  const int P = p->order, n0 = p->n[0], n1 = p->n[1], n2 = p->n[2];
  /* Argument errors are agreed on with the other ranks below, so that a bad call on
   * one rank fails everywhere instead of leaving the others in a collective. */
  aisci_status st = AISCI_OK;
  if (n < 0 || (n > 0 && (!x || !q))) {
    st = aisci_set_error(AISCI_ERR_ARG, "pppm_spread: need n >= 0 and x, q for n > 0");
    n = 0;
  }

  /* 1. Assignment weights; the planes (along c) and the rows and columns (a, b) that
   * the atoms touch */
  const int ws = p->wstride;
  if (aisci_grow((void **) &p->base, &p->base_cap, 3 * (int64_t) n, sizeof(int), "pppm_spread",
                 "grid points") != AISCI_OK ||
      aisci_grow((void **) &p->w, &p->w_cap, (int64_t) n * ws, sizeof(double), "pppm_spread",
                 "weights") != AISCI_OK)
    st = aisci_set_error(AISCI_ERR_ALLOC, "pppm_spread: out of memory for %d atoms", n);
  for (int c = 0; c < n2; c++) p->slot_of_plane[c] = -1;
  memset(p->touched_a, 0, (size_t) n0);
  memset(p->touched_b, 0, (size_t) n1);
  for (int i = 0; st == AISCI_OK && i < n; i++) {
    for (int d = 0; d < 3; d++) {
      double s =
          x[3 * i] * p->hinv[0][d] + x[3 * i + 1] * p->hinv[1][d] + x[3 * i + 2] * p->hinv[2][d];
      if (!isfinite(s)) {
        st = aisci_set_error(AISCI_ERR_ARG, "pppm_spread: atom %d has a non-finite position", i);
        break;
      }
      /* fold into [0, 1) first so that huge coordinates keep their precision on the grid */
      s -= floor(s);
      double *wi = &p->w[(size_t) i * ws];
      int first = pppm_bspline(s * p->n[d], P, wi + d * P, p->ad ? wi + (3 + d) * P : NULL);
      if (p->ad) wi[6 * P + d] = s * p->n[d];
      p->base[3 * i + d] = pppm_wrap(first, p->n[d]);
    }
    if (st != AISCI_OK) break;
    for (int k = 0; k < P; k++) {
      p->touched_a[pppm_wrap(p->base[3 * i] + k, n0)] = 1;
      p->touched_b[pppm_wrap(p->base[3 * i + 1] + k, n1)] = 1;
      p->slot_of_plane[pppm_wrap(p->base[3 * i + 2] + k, n2)] = 0;
    }
  }
  st = aisci_agree_status(p->comm_atoms, st, "pppm");
  if (st != AISCI_OK) return st;
  p->natoms_local = n;
  pppm_cover_arc(p->touched_a, n0, &p->rect[0], &p->rect[1]);
  pppm_cover_arc(p->touched_b, n1, &p->rect[2], &p->rect[3]);
  const int sa = p->rect[0], la = p->rect[1], sb = p->rect[2], lb = p->rect[3];
  const size_t patch = (size_t) la * lb; /* my part of one plane */
  int ns = 0;
  for (int c = 0; c < n2; c++)
    if (p->slot_of_plane[c] == 0) ns++;
  const int64_t nvalues = 3 * (int64_t) ns * (int64_t) patch;
  if (aisci_grow((void **) &p->plane_of_slot, &p->slot_cap, ns, sizeof(int), "pppm_spread",
                 "plane list") != AISCI_OK ||
      aisci_grow((void **) &p->planes, &p->planes_cap, nvalues, sizeof(double), "pppm_spread",
                 "planes") != AISCI_OK ||
      /* node layout, not a solver: the field patches come back into recvbuf */
      (!p->solver &&
       (aisci_grow((void **) &p->recvbuf, &p->recvbuf_cap, nvalues, sizeof(double), "pppm_spread",
                   "field planes") != AISCI_OK ||
        aisci_grow((void **) &p->req, &p->req_cap, 3 + pppm_nchunks((size_t) ns * patch),
                   sizeof(MPI_Request), "pppm_spread", "requests") != AISCI_OK)))
    st = aisci_set_error(AISCI_ERR_ALLOC, "pppm_spread: out of memory for %d grid planes", ns);
  st = aisci_agree_status(p->comm_atoms, st, "pppm");
  if (st != AISCI_OK) return st;
  p->nslots = 0;
  for (int c = 0; c < n2; c++)
    if (p->slot_of_plane[c] == 0) {
      p->plane_of_slot[p->nslots] = c;
      p->slot_of_plane[c] = p->nslots++;
    }

  /* 2. Charge assignment into the touched patches: point (a, b) of a plane sits at
   * ((b - sb) mod n1) * la + ((a - sa) mod n0). From here on base[] holds the offsets
   * inside the patch along a and b. */
  memset(p->planes, 0, sizeof(double) * ns * patch);
  for (int i = 0; i < n; i++) {
    p->base[3 * i] = pppm_wrap(p->base[3 * i] - sa, n0);
    p->base[3 * i + 1] = pppm_wrap(p->base[3 * i + 1] - sb, n1);
    const double *wa = &p->w[(size_t) i * ws], *wb = wa + P, *wc = wb + P;
    int ba = p->base[3 * i], bb = p->base[3 * i + 1], bc = p->base[3 * i + 2];
    int ia[AISCI_PPPM_MAX_ORDER];
    for (int k = 0; k < P; k++) ia[k] = pppm_wrap(ba + k, n0);
    for (int kc = 0; kc < P; kc++) {
      double *pl = p->planes + (size_t) p->slot_of_plane[pppm_wrap(bc + kc, n2)] * patch;
      double qc = q[i] * wc[kc];
      for (int kb = 0; kb < P; kb++) {
        double *row = pl + (size_t) pppm_wrap(bb + kb, n1) * la;
        double qcb = qc * wb[kb];
        for (int ka = 0; ka < P; ka++) row[ia[ka]] += qcb * wa[ka];
      }
    }
  }

  p->state = PPPM_SPREAD;
  return AISCI_OK;
}

aisci_status aisci_pppm_interpolate(aisci_pppm *p, int n, const double *q, double *forces)
{
  if (!p) return aisci_set_error(AISCI_ERR_ARG, "pppm_interpolate: pppm is NULL");
  if (p->state != PPPM_SOLVED)
    return aisci_set_error(AISCI_ERR_STATE, "pppm_interpolate: solve must come first");
  aisci_status st = AISCI_OK;
  if (n != p->natoms_local)
    st = aisci_set_error(AISCI_ERR_STATE, "pppm_interpolate: %d atoms, but spread was given %d", n,
                         p->natoms_local);
  else if (n > 0 && (!q || !forces))
    st = aisci_set_error(AISCI_ERR_ARG, "pppm_interpolate: q and forces needed for n > 0");
  st = aisci_agree_status(p->comm_atoms, st, "pppm");
  if (st != AISCI_OK) {
    p->state = PPPM_IDLE; /* the step is abandoned; the next spread starts afresh */
    return st;
  }
  const int P = p->order, n0 = p->n[0], n1 = p->n[1], n2 = p->n[2];
  p->state = PPPM_IDLE;

  /* solve has brought the field of my patches into p->planes; base[] holds offsets inside
   * my patch (la x lb per plane and component) */
  const int la = p->rect[1];
  const size_t patch = (size_t) p->rect[1] * p->rect[3];
  const double scale = p->qqrd2e / p->volume;
  const int ws = p->wstride;
  for (int i = 0; i < n; i++) {
    const double *wa = &p->w[(size_t) i * ws], *wb = wa + P, *wc = wb + P;
    int ba = p->base[3 * i], bb = p->base[3 * i + 1], bc = p->base[3 * i + 2];
    /* offsets wrap only when the patch is a whole period (la = n0 or lb = n1) */
    int ia[AISCI_PPPM_MAX_ORDER];
    for (int k = 0; k < P; k++) ia[k] = pppm_wrap(ba + k, n0);
    if (!p->ad) {
      double e[3] = {0.0, 0.0, 0.0};
      for (int kc = 0; kc < P; kc++) {
        const double *pl =
            p->planes + 3 * (size_t) p->slot_of_plane[pppm_wrap(bc + kc, n2)] * patch;
        for (int kb = 0; kb < P; kb++) {
          size_t row = (size_t) pppm_wrap(bb + kb, n1) * la;
          double wcb = wc[kc] * wb[kb];
          for (int ka = 0; ka < P; ka++) {
            double ww = wcb * wa[ka];
            size_t o = row + ia[ka];
            e[0] += ww * pl[o];
            e[1] += ww * pl[patch + o];
            e[2] += ww * pl[2 * patch + o];
          }
        }
      }
      for (int d = 0; d < 3; d++) forces[3 * i + d] += scale * q[i] * e[d];
      continue;
    }
    /* ad: gradient of the interpolated potential in grid coordinates u_d,
     * F_alpha = -qqrd2e q sum_d n_d H^-1[alpha][d] d phi / d u_d */
    const double *da = wa + 3 * P, *db = da + P, *dc = db + P, *u = wa + 6 * P;
    double gu[3] = {0.0, 0.0, 0.0};
    for (int kc = 0; kc < P; kc++) {
      const double *pl = p->planes + (size_t) p->slot_of_plane[pppm_wrap(bc + kc, n2)] * patch;
      for (int kb = 0; kb < P; kb++) {
        size_t row = (size_t) pppm_wrap(bb + kb, n1) * la;
        double wcb = wc[kc] * wb[kb], wcdb = wc[kc] * db[kb], dcwb = dc[kc] * wb[kb];
        for (int ka = 0; ka < P; ka++) {
          double phi = pl[row + ia[ka]];
          gu[0] += wcb * da[ka] * phi;
          gu[1] += wcdb * wa[ka] * phi;
          gu[2] += dcwb * wa[ka] * phi;
        }
      }
    }
    for (int a = 0; a < 3; a++) {
      double f = 0.0;
      for (int d = 0; d < 3; d++) f -= p->n[d] * p->hinv[a][d] * gu[d];
      /* remove the mean self-force of the charge on itself (first two harmonics of its
       * position inside the mesh cell): F_self = -2 q^2 sum c sin(2 pi h u_d) */
      double fs = 0.0;
      for (int h = 0; h < 2; h++)
        for (int d = 0; d < 3; d++)
          fs += p->sf_coef[(h * 3 + d) * 3 + a] * sin(2.0 * AISCI_PI * (h + 1) * u[d]);
      forces[3 * i + a] += scale * q[i] * f + 2.0 * p->qqrd2e * q[i] * q[i] * fs;
    }
  }
  return AISCI_OK;
}
