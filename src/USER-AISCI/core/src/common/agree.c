/* Agreement between the ranks of a communicator, the core's one home for it: on a status
#define _POSIX_C_SOURCE 200809L
 * (aisci_agree_status, private: every collective call of the core ends with it, so a
 * failure on one rank fails them all instead of hanging) and on values (aisci_agree,
 * public: settings that must be equal on every rank, with an optional timeout). */
#include "aisci/agree.h"
#include "aisci_testing/agree.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "internal.h"

aisci_status aisci_agree_status(MPI_Comm comm, aisci_status st, const char *who)
{
  int mine = (int) st, worst = 0;
  int rc = MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, comm);
  if (rc != MPI_SUCCESS) return aisci_mpi_fail(rc, who, "MPI_Allreduce of the status");
  if (worst != AISCI_OK && mine == AISCI_OK)
    return aisci_set_error((aisci_status) worst, "%s: failed on another rank", who);
  return (aisci_status) worst;
}

/* Collectives of aisci_agree that timed out: MPI may still write into their buffers, so
 * they are kept here (reachable) until aisci_agree_reap sees them complete. */
struct abandoned_agree {
  MPI_Request req;
  double *buf;
  struct abandoned_agree *next;
};
static struct abandoned_agree *abandoned = NULL;

int aisci_agree_reap(void)
{
  int left = 0;
  for (struct abandoned_agree **p = &abandoned; *p;) {
    struct abandoned_agree *a = *p;
    int done = 0;
    if (MPI_Test(&a->req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done) {
      *p = a->next;
      free(a->buf);
      free(a);
    } else {
      left++;
      p = &a->next;
    }
  }
  return left;
}

aisci_status aisci_agree(MPI_Comm comm, int n, const double *values, double rtol, double timeout_s,
                         int *index, double *lo, double *hi)
{
  if (n < 0 || (n > 0 && !values) || !index || !(rtol >= 0.0))
    return aisci_set_error(AISCI_ERR_ARG, "agree: invalid arguments (n = %d)", n);
  *index = -1;
  /* minima of v and of -v (= -maxima) in one Allreduce; n = 0 still synchronises */
  double *buf = malloc(sizeof(double) * (4 * (size_t) n + 4));
  if (!buf) return aisci_set_error(AISCI_ERR_ALLOC, "agree: out of memory for %d values", n);
  for (int k = 0; k < n; k++) {
    buf[k] = values[k];
    buf[n + k] = -values[k];
  }
  MPI_Request req;
  int rc = MPI_Iallreduce(buf, buf + 2 * n, 2 * n, MPI_DOUBLE, MPI_MIN, comm, &req);
  if (rc == MPI_SUCCESS && timeout_s > 0.0) {
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
      int done = 0;
      rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS || done) break;
      clock_gettime(CLOCK_MONOTONIC, &now);
      if ((double) (now.tv_sec - t0.tv_sec) + 1e-9 * (double) (now.tv_nsec - t0.tv_nsec) >
          timeout_s) {
        /* the collective stays posted and owns buf: kept for aisci_agree_reap */
        struct abandoned_agree *a = malloc(sizeof *a);
        if (a) {
          a->req = req;
          a->buf = buf;
          a->next = abandoned;
          abandoned = a;
        }
        return aisci_set_error(AISCI_ERR_MPI, "agree: some ranks did not join within %g s",
                               timeout_s);
      }
      struct timespec ts = {0, 1000000};
      nanosleep(&ts, NULL);
    }
  } else if (rc == MPI_SUCCESS) {
    rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  if (rc) {
    free(buf);
    return aisci_mpi_fail(rc, "agree", "Allreduce of the values to agree on");
  }
  for (int k = 0; k < n; k++) {
    const double a = buf[2 * n + k], b = -buf[3 * n + k];
    const double scale = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    if (b - a > rtol * scale) {
      *index = k;
      if (lo) *lo = a;
      if (hi) *hi = b;
      break;
    }
  }
  free(buf);
  return AISCI_OK;
}
