/* Calls whose names differ between the LAMMPS versions the adapters build against.
 * LAMMPS 29Sep2021 (Debian's liblammps, lmp-aisci) names the per-style communications
 * Comm::forward_comm_fix / reverse_comm_fix / forward_comm_pair / reverse_comm_pair; from
 * 2022 on (4Feb2025, the plugin route, docs/plugin.md) they are overloads of
 * Comm::forward_comm / reverse_comm. The right one is picked at compile time from the
 * Comm class itself (no version macro: LAMMPS installs none), so the same source builds
 * against either. */
#ifndef AISCI_LMP_COMPAT_H
#define AISCI_LMP_COMPAT_H

#include <utility>

namespace AISCI {
namespace compat_detail {
// Preferred (int argument): the 29Sep2021 names, when the Comm class has them.
template <typename C, typename F>
auto forward_fix(C *comm, F *fix, int size, int) -> decltype(comm->forward_comm_fix(fix, size))
{
  return comm->forward_comm_fix(fix, size);
}
template <typename C, typename F> void forward_fix(C *comm, F *fix, int size, long)
{
  comm->forward_comm(fix, size);
}
template <typename C, typename F>
auto reverse_fix(C *comm, F *fix, int size, int) -> decltype(comm->reverse_comm_fix(fix, size))
{
  return comm->reverse_comm_fix(fix, size);
}
template <typename C, typename F> void reverse_fix(C *comm, F *fix, int size, long)
{
  comm->reverse_comm(fix, size);
}
template <typename C, typename P>
auto forward_pair(C *comm, P *pair, int) -> decltype(comm->forward_comm_pair(pair))
{
  return comm->forward_comm_pair(pair);
}
template <typename C, typename P> void forward_pair(C *comm, P *pair, long)
{
  comm->forward_comm(pair);
}
template <typename C, typename P>
auto reverse_pair(C *comm, P *pair, int) -> decltype(comm->reverse_comm_pair(pair))
{
  return comm->reverse_comm_pair(pair);
}
template <typename C, typename P> void reverse_pair(C *comm, P *pair, long)
{
  comm->reverse_comm(pair);
}
}    // namespace compat_detail

/* comm->forward_comm_fix(fix, size) (29Sep2021) or comm->forward_comm(fix, size). */
template <typename C, typename F> void forward_comm_fix(C *comm, F *fix, int size)
{
  compat_detail::forward_fix(comm, fix, size, 0);
}
/* comm->reverse_comm_fix(fix, size) (29Sep2021) or comm->reverse_comm(fix, size). */
template <typename C, typename F> void reverse_comm_fix(C *comm, F *fix, int size)
{
  compat_detail::reverse_fix(comm, fix, size, 0);
}
/* comm->forward_comm_pair(pair) (29Sep2021) or comm->forward_comm(pair). */
template <typename C, typename P> void forward_comm_pair(C *comm, P *pair)
{
  compat_detail::forward_pair(comm, pair, 0);
}
/* comm->reverse_comm_pair(pair) (29Sep2021) or comm->reverse_comm(pair). */
template <typename C, typename P> void reverse_comm_pair(C *comm, P *pair)
{
  compat_detail::reverse_pair(comm, pair, 0);
}
}    // namespace AISCI

#endif
