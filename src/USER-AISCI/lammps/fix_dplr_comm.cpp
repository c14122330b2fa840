/* fix dplr (USER-AISCI adapter), part 2: LAMMPS data movement only, the forward and
 * reverse communication of per-atom values (comm_mode selects what moves) and the
 * memory estimate. The physics and the bookkeeping are in fix_dplr.cpp and the C core
 * (aisci/dplr.h). */
#include "fix_dplr.h"

#include "atom.h"
#include "domain.h"

using namespace LAMMPS_NS;

int FixDplr::pack_forward_comm(int n, int *list, double *out, int pbc_flag, int *pbc)
{
  int m = 0;
  if (comm_mode == DVEC) {
    for (int k = 0; k < n; k++)
      for (int d = 0; d < 3; d++) out[m++] = dvec[3 * (size_t) list[k] + d];
    return m;
  }
  // XWC: positions with the periodic shift of this swap (as LAMMPS's own x communication)
  double shift[3] = {0.0, 0.0, 0.0};
  if (pbc_flag) {
    shift[0] = pbc[0] * domain->xprd;
    shift[1] = pbc[1] * domain->yprd;
    shift[2] = pbc[2] * domain->zprd;
    if (domain->triclinic) {
      shift[0] += pbc[5] * domain->xy + pbc[4] * domain->xz;
      shift[1] += pbc[3] * domain->yz;
    }
  }
  double **x = atom->x;
  for (int k = 0; k < n; k++)
    for (int d = 0; d < 3; d++) out[m++] = x[list[k]][d] + shift[d];
  return m;
}

void FixDplr::unpack_forward_comm(int n, int first, double *in)
{
  int m = 0;
  if (comm_mode == DVEC) {
    for (int i = first; i < first + n; i++)
      for (int d = 0; d < 3; d++) dvec[3 * (size_t) i + d] = in[m++];
    return;
  }
  double **x = atom->x;
  const int *type = atom->type;
  for (int i = first; i < first + n; i++, m += 3)
    if (wc_parent_type[type[i]])
      for (int d = 0; d < 3; d++) x[i][d] = in[m + d];
}

int FixDplr::pack_reverse_comm(int n, int first, double *out)
{
  int m = 0;
  for (int i = first; i < first + n; i++)
    for (int d = 0; d < 3; d++) out[m++] = buf[3 * (size_t) i + d];
  return m;
}

void FixDplr::unpack_reverse_comm(int n, int *list, double *in)
{
  int m = 0;
  for (int k = 0; k < n; k++)
    for (int d = 0; d < 3; d++) buf[3 * (size_t) list[k] + d] += in[m++];
}

double FixDplr::memory_usage()
{
  double bytes = sizeof(double) * (dvec.capacity() + buf.capacity() + pos.capacity() +
                                   dw_out.capacity() + grad.capacity() + f_dw.capacity());
  bytes += sizeof(int64_t) * model_types.capacity();
  bytes += sizeof(int) * (atom_index.capacity() + wc_local.capacity());
  bytes += (double) (aisci_graph_num_edges(graph) + aisci_graph_num_edges(edges)) *
           (2 * sizeof(int64_t) + 3 * sizeof(double));
  return bytes;
}

