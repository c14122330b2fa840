/* PPPM Poisson solve on the FFT slabs (pppm_internal.h): the charge patches summed onto
 * the owners of their planes, the forward FFT, the influence function G with the energy
 * and virial, the inverse FFTs of the field (ik: -i k_d G rho, three of them; ad: the
 * potential G rho, one) and the field patches back to the ranks that spread them. In the
 * node layout the node solvers run it on the node patches (pppm_node.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pppm_internal.h"

/* The charge exchange that completes the spread, run at the start of solve (it touches
 * no atom array, so it may run on solve's thread): sum the patch of every rank of comm
 * (solver ranks: nodes in the node layout) onto the owners of their planes, into the
 * padded FFT slab. Collective on comm. */
static aisci_status exchange_charges(aisci_pppm *p, const pppm_patch *pt, MPI_Comm comm)
{
  aisci_status st = AISCI_OK;
  const int n0 = p->n[0], n1 = p->n[1], ns = pt->nslots;
  const size_t patch = (size_t) pt->rect[1] * pt->rect[3];
  /* Sum the patches onto the planes' owners. Slots are in increasing c, and owners
   * hold contiguous blocks of c in rank order, so each destination is one run of slots. */
  for (int r = 0; r < p->nprocs; r++) p->scount[r] = 0;
  for (int s = 0; s < ns; s++) p->scount[p->owner[pt->plane_of_slot[s]]]++;
  p->sdispl[0] = 0;
  for (int r = 1; r < p->nprocs; r++) p->sdispl[r] = p->sdispl[r - 1] + p->scount[r - 1];
  if (MPI_Alltoall(p->scount, 1, MPI_INT, p->rcount, 1, MPI_INT, comm) != MPI_SUCCESS ||
      MPI_Allgather((void *) pt->rect, 4, MPI_INT, p->rect_all, 4, MPI_INT, comm) != MPI_SUCCESS)
    return aisci_set_error(AISCI_ERR_MPI, "pppm_solve: MPI_Alltoall of the charge patches failed");
  p->rdispl[0] = 0;
  for (int r = 1; r < p->nprocs; r++) p->rdispl[r] = p->rdispl[r - 1] + p->rcount[r - 1];
  int nrecv = p->rdispl[p->nprocs - 1] + p->rcount[p->nprocs - 1];
  size_t nrecv_d = 0;
  for (int r = 0; r < p->nprocs; r++) {
    size_t rpatch = (size_t) p->rect_all[4 * r + 1] * p->rect_all[4 * r + 3];
    p->scnt_d[r] = (int) (p->scount[r] * patch);
    p->sdsp_d[r] = (int) (p->sdispl[r] * patch);
    p->rcnt_d[r] = (int) (p->rcount[r] * rpatch);
    p->rdsp_d[r] = (int) nrecv_d;
    nrecv_d += p->rcount[r] * rpatch;
  }
  if (aisci_grow((void **) &p->recv_plane, &p->recv_cap, nrecv, sizeof(int), "pppm_solve",
                 "received plane numbers") != AISCI_OK ||
      aisci_grow((void **) &p->recvbuf, &p->recvbuf_cap, 3 * (int64_t) nrecv_d, sizeof(double),
                 "pppm_solve", "received planes") != AISCI_OK)
    st =
        aisci_set_error(AISCI_ERR_ALLOC, "pppm_solve: out of memory for %d received planes", nrecv);
  st = aisci_agree_status(comm, st, "pppm");
  if (st != AISCI_OK) return st;
  p->nrecv = nrecv;
  if (MPI_Alltoallv((void *) pt->plane_of_slot, p->scount, p->sdispl, MPI_INT, p->recv_plane,
                    p->rcount, p->rdispl, MPI_INT, comm) != MPI_SUCCESS ||
      MPI_Alltoallv(pt->planes, p->scnt_d, p->sdsp_d, MPI_DOUBLE, p->recvbuf, p->rcnt_d, p->rdsp_d,
                    MPI_DOUBLE, comm) != MPI_SUCCESS)
    return aisci_set_error(AISCI_ERR_MPI, "pppm_solve: MPI_Alltoallv of the charge patches failed");

  /* Received patches, summed in rank order (for a given grid point the same order at
   * any rank count: sources ascending), into the padded FFT slab */
  const size_t stride = 2 * (size_t) p->nh;
  memset(p->rho, 0, sizeof(double) * 2 * (size_t) (p->alloc_local > 0 ? p->alloc_local : 1));
  for (int r = 0; r < p->nprocs; r++) {
    const int *rr = p->rect_all + 4 * r;
    const double *src = p->recvbuf + p->rdsp_d[r];
    for (int s = p->rdispl[r]; s < p->rdispl[r] + p->rcount[r]; s++) {
      double *dst = p->rho + (size_t) (p->recv_plane[s] - (int) p->local_c0) * n1 * stride;
      for (int b = 0; b < rr[3]; b++) {
        pppm_add_run(dst + (size_t) pppm_wrap(rr[2] + b, n1) * stride, rr[0], rr[1], n0, src);
        src += rr[1];
      }
    }
  }
  return AISCI_OK;
}

/* Interpolate step 1, run by solve: the owners send the field components (3 for ik, the
 * potential for ad) of every patch they received back to the patch's rank, into
 * pt->planes. Collective on comm. */
static aisci_status exchange_fields(aisci_pppm *p, const pppm_patch *pt, MPI_Comm comm)
{
  const int n0 = p->n[0], n1 = p->n[1];
  const size_t stride = 2 * (size_t) p->nh;
  const int nc = p->ncomp;
  for (int r = 0; r < p->nprocs; r++) {
    const int *rr = p->rect_all + 4 * r;
    double *dst = p->recvbuf + nc * (size_t) p->rdsp_d[r];
    for (int s = p->rdispl[r]; s < p->rdispl[r] + p->rcount[r]; s++) {
      size_t off = (size_t) (p->recv_plane[s] - (int) p->local_c0) * n1 * stride;
      for (int d = 0; d < nc; d++) {
        const double *src = p->field[d] + off;
        for (int b = 0; b < rr[3]; b++) {
          pppm_copy_run(dst, src + (size_t) pppm_wrap(rr[2] + b, n1) * stride, rr[0], rr[1], n0);
          dst += rr[1];
        }
      }
    }
  }
  for (int r = 0; r < p->nprocs; r++) {
    p->scnt_d[r] *= nc;
    p->sdsp_d[r] *= nc;
    p->rcnt_d[r] *= nc;
    p->rdsp_d[r] *= nc;
  }
  if (MPI_Alltoallv(p->recvbuf, p->rcnt_d, p->rdsp_d, MPI_DOUBLE, pt->planes, p->scnt_d, p->sdsp_d,
                    MPI_DOUBLE, comm) != MPI_SUCCESS)
    return aisci_set_error(AISCI_ERR_MPI, "pppm_solve: MPI_Alltoallv of the field failed");
  return AISCI_OK;
}

/* The grid work of one solve on the solver ranks (collective on comm_fft): the patches
 * pt summed onto the planes' owners, FFTs, influence function, energy and virial into
 * p, field patches back into pt->planes. */
static aisci_status solve_mesh(aisci_pppm *p, const pppm_patch *pt)
{
  aisci_status st = exchange_charges(p, pt, p->comm_fft);
  if (st != AISCI_OK) return st;
  fftw_mpi_execute_dft_r2c(p->plan_fwd, p->rho, p->rho_k);

  const int n0 = p->n[0], n1 = p->n[1], n2 = p->n[2], nh = p->nh;
  const double inv4g2 = 0.25 / (p->g_eff * p->g_eff);
  double sums[7] = {0, 0, 0, 0, 0, 0, 0};
  for (ptrdiff_t ib = 0; ib < p->local_nb; ib++) {
    int mb = pppm_signed_index((int) (p->local_b0 + ib), n1);
    for (int jc = 0; jc < n2; jc++) {
      int mc = pppm_signed_index(jc, n2);
      for (int ja = 0; ja < nh; ja++) {
        size_t idx = ((size_t) ib * n2 + jc) * nh + ja;
        double g = p->green[idx];
        if (g == 0.0) continue;
        int ma = ja;
        double k[3];
        for (int a = 0; a < 3; a++)
          k[a] = 2.0 * AISCI_PI * (p->hinv[a][0] * ma + p->hinv[a][1] * mb + p->hinv[a][2] * mc);
        double ksq = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
        double weight = (ja == 0 || (n0 % 2 == 0 && ja == n0 / 2)) ? 1.0 : 2.0;
        double re = p->rho_k[idx][0], im = p->rho_k[idx][1];
        double e = weight * g * (re * re + im * im);
        double c = 2.0 * (1.0 / ksq + inv4g2);
        sums[0] += e;
        sums[1] += e * (1.0 - c * k[0] * k[0]);
        sums[2] += e * (1.0 - c * k[1] * k[1]);
        sums[3] += e * (1.0 - c * k[2] * k[2]);
        sums[4] += -e * c * k[0] * k[1];
        sums[5] += -e * c * k[0] * k[2];
        sums[6] += -e * c * k[1] * k[2];
      }
    }
  }
  /* with ad, the self-force sums of the influence function ride along (they change only
   * with the cell, but one reduction per step is cheaper than a separate collective) */
  double in[25], tot[25];
  memcpy(in, sums, sizeof(sums));
  memcpy(in + 7, p->sf_local, sizeof(p->sf_local));
  int nred = p->ad ? 25 : 7;
  if (MPI_Allreduce(in, tot, nred, MPI_DOUBLE, MPI_SUM, p->comm_fft) != MPI_SUCCESS)
    return aisci_set_error(AISCI_ERR_MPI, "pppm_solve: MPI_Allreduce failed");
  double scale = p->qqrd2e / (2.0 * p->volume);
  p->energy = scale * tot[0];
  for (int v = 0; v < 6; v++) p->virial[v] = scale * tot[v + 1];
  /* self-force coefficient per unit charge^2 (without qqrd2e): -(1/V) sum_k G sum_M ... */
  if (p->ad)
    for (int t = 0; t < 18; t++) p->sf_coef[t] = -tot[7 + t] / p->volume;

  if (p->ad) {
    /* ad: the mesh potential phi(k) = G(k) rho(k), one inverse FFT */
    size_t nk = (size_t) p->local_nb * n2 * nh;
    for (size_t idx = 0; idx < nk; idx++) {
      p->work_k[idx][0] = p->green[idx] * p->rho_k[idx][0];
      p->work_k[idx][1] = p->green[idx] * p->rho_k[idx][1];
    }
    fftw_mpi_execute_dft_c2r(p->plan_bwd, p->work_k, p->field[0]);
  }
  /* ik: field E = -grad phi: E_d(k) = -i k_d G(k) rho(k), one inverse FFT per component */
  for (int d = 0; d < 3 && !p->ad; d++) {
    for (ptrdiff_t ib = 0; ib < p->local_nb; ib++) {
      int mb = pppm_signed_index((int) (p->local_b0 + ib), n1);
      for (int jc = 0; jc < n2; jc++) {
        int mc = pppm_signed_index(jc, n2);
        for (int ja = 0; ja < nh; ja++) {
          size_t idx = ((size_t) ib * n2 + jc) * nh + ja;
          double kd =
              2.0 * AISCI_PI * (p->hinv[d][0] * ja + p->hinv[d][1] * mb + p->hinv[d][2] * mc);
          double f = kd * p->green[idx];
          p->work_k[idx][0] = f * p->rho_k[idx][1];
          p->work_k[idx][1] = -f * p->rho_k[idx][0];
        }
      }
    }
    fftw_mpi_execute_dft_c2r(p->plan_bwd, p->work_k, p->field[d]);
  }
  return exchange_fields(p, pt, p->comm_fft);
}

aisci_status aisci_pppm_solve(aisci_pppm *p, double *energy, double virial[6])
{
  if (!p) return aisci_set_error(AISCI_ERR_ARG, "pppm_solve: pppm is NULL");
  if (p->state != PPPM_SPREAD)
    return aisci_set_error(AISCI_ERR_STATE, "pppm_solve: spread must come first");
  aisci_status st = AISCI_OK;
  if (p->layout == AISCI_PPPM_LAYOUT_RANK) {
    pppm_patch own = {p->rect, p->nslots, p->plane_of_slot, p->planes};
    st = solve_mesh(p, &own);
  } else if (p->solver) {
    st = pppm_node_gather(p);
    /* all solvers learn about a failed gather before their collectives */
    st = aisci_agree_status(p->comm_fft, st, "pppm");
    if (st == AISCI_OK) {
      pppm_patch node = {p->node_rect, p->node_nslots, p->node_plane_of_slot, p->node_planes};
      st = solve_mesh(p, &node);
    }
    st = pppm_node_scatter(p, st);
  } else {
    st = aisci_pppm_hand_off(p);
    if (st == AISCI_OK) {
      int rc = MPI_Waitall(p->nreq, p->req, MPI_STATUSES_IGNORE);
      p->handed = 0;
      st = (aisci_status) (int) p->reply[0];
      if (st != AISCI_OK)
        st = aisci_set_error(st, "pppm_solve: the node's solver rank failed (%s)",
                             aisci_status_string(st));
      else if (rc != MPI_SUCCESS)
        st = aisci_set_error(AISCI_ERR_MPI, "pppm_solve: receiving the field patches failed");
      if (st == AISCI_OK) {
        /* the fields are this rank's planes now; the spent charges become the buffer */
        double *t = p->planes;
        int64_t c = p->planes_cap;
        p->planes = p->recvbuf;
        p->planes_cap = p->recvbuf_cap;
        p->recvbuf = t;
        p->recvbuf_cap = c;
        p->energy = p->reply[1];
        memcpy(p->virial, p->reply + 2, sizeof(double) * 6);
        memcpy(p->sf_coef, p->reply + 8, sizeof(double) * 18);
      }
    }
  }
  if (st != AISCI_OK) {
    p->state = PPPM_IDLE;
    return st;
  }
  if (energy) *energy = p->energy;
  if (virial) memcpy(virial, p->virial, sizeof(double) * 6);
  p->state = PPPM_SOLVED;
  return AISCI_OK;
}
