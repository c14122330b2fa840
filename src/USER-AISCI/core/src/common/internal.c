/* Private helpers of libaisci_core (internal.h). */
#include "internal.h"

#include <stdlib.h>

aisci_status aisci_grow(void **buf, int64_t *cap, int64_t need, size_t elem, const char *who,
                        const char *what)
{
  if (need <= *cap && *buf) return AISCI_OK;
  int64_t want = *cap + *cap / 2;
  if (want < need) want = need;
  if (want < 16) want = 16;
  if ((uint64_t) want > SIZE_MAX / elem / 2)
    return aisci_set_error(AISCI_ERR_ALLOC, "%s: %s: %lld elements is too many", who, what,
                           (long long) need);
  void *p = realloc(*buf, (size_t) want * elem);
  if (!p)
    return aisci_set_error(AISCI_ERR_ALLOC, "%s: cannot allocate %s (%lld elements)", who, what,
                           (long long) want);
  *buf = p;
  *cap = want;
  return AISCI_OK;
}

aisci_status aisci_mpi_fail(int rc, const char *who, const char *what)
{
  if (rc == MPI_SUCCESS) return AISCI_OK;
  return aisci_set_error(AISCI_ERR_MPI, "%s: %s failed (MPI error %d)", who, what, rc);
}

int64_t aisci_centre_triplets(const double *edge_vec, int64_t e0, int64_t e1, double r2max,
                              int64_t *trip)
{
  int64_t t = 0;
  for (int64_t a = e0; a < e1; a++) {
    const double *va = edge_vec + 3 * a;
    if (!(va[0] * va[0] + va[1] * va[1] + va[2] * va[2] < r2max)) continue;
    for (int64_t b = e0; b < e1; b++) {
      const double *vb = edge_vec + 3 * b;
      if (b == a || !(vb[0] * vb[0] + vb[1] * vb[1] + vb[2] * vb[2] < r2max)) continue;
      if (trip) {
        trip[2 * t] = a;
        trip[2 * t + 1] = b;
      }
      t++;
    }
  }
  return t;
}
