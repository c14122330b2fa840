/* aisci_beadcomm under MPI (run with 1, 2 and 4 ranks).
 * The ranks are split into P partitions ("beads") of equal size with MPI_Comm_split, for
 * every P that divides the number of ranks. Every partition distributes the same set of
 * tags over its ranks in its own random way (so column peers do not own the same atoms)
 * and in a random local order. Values encode (tag, bead, component); allgather must return
 * bead j's value of every local atom for every j. Then the distribution changes
 * (set_atoms: the exchange must replan), only one rank reorders its atoms, all partitions
 * use the same distribution (no fix-ups needed), and the error paths: unequal partition
 * sizes or an inconsistent bead numbering -> AISCI_ERR_MPI on every rank, a tag that exists
 * in no other partition -> AISCI_ERR_MISSING on every rank with one message naming it, and
 * recovery afterwards; agree() on equal and differing values; a tag
 * twice in one rank's list and NULL arrays in sum_universe -> AISCI_ERR_ARG. */
#include "aisci_testing/agree.h"
#include "aisci_testing/beadcomm.h"
#include "aisci_test.h"

#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int urank, usize;

static uint64_t mix(uint64_t z)
{
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

#define NTAGS 240
static int64_t tag_of(int i) { return 7 + 3 * (int64_t) i + (i > 100 ? 100000 : 0); }

static double value(int64_t tag, int bead, int c) { return (double) tag * 1000.0 + bead * 10.0 + c; }

/* The atoms this rank owns in partition `bead` for distribution `round`: the owner of each
 * tag is a hash of (tag, bead, round) — the same on every rank of the partition — and the
 * local order is a shuffle. round < 0: the same distribution in every partition.
 * empty_rank >= 0: that world rank owns nothing in bead 1 (only with > 1 rank). */
static int my_atoms(int bead, int wrank, int wsize, int round, int empty_rank, int64_t *tags)
{
  int n = 0;
  for (int i = 0; i < NTAGS; i++) {
    uint64_t h = mix((uint64_t) tag_of(i) * 31 + (uint64_t) (round < 0 ? 0 : bead) * 1000003 +
                     (uint64_t) (round < 0 ? -round : round) * 7919);
    int owner = (int) (h % (uint64_t) wsize);
    if (empty_rank >= 0 && wsize > 1 && bead == 1 && owner == empty_rank) owner = (owner + 1) % wsize;
    if (owner == wrank) tags[n++] = tag_of(i);
  }
  uint64_t s = mix((uint64_t) (bead * 97 + wrank * 13 + round * 5 + 1));
  for (int i = n - 1; i > 0; i--) {
    s = mix(s);
    int j = (int) (s % (uint64_t) (i + 1));
    int64_t t = tags[i];
    tags[i] = tags[j];
    tags[j] = t;
  }
  return n;
}

/* allgather with `width` values per atom; returns the number of wrong entries on this rank */
static long check_gather(aisci_beadcomm *bc, int nbeads, int bead, int n, const int64_t *tags,
                         int width, double offset, aisci_status *status)
{
  double *mine = malloc(sizeof(double) * (n ? n : 1) * width);
  double *all = malloc(sizeof(double) * (size_t) nbeads * (n ? n : 1) * width);
  for (int i = 0; i < n; i++)
    for (int c = 0; c < width; c++) mine[i * width + c] = value(tags[i], bead, c) + offset;
  for (size_t a = 0; a < (size_t) nbeads * n * width; a++) all[a] = -1.0;
  *status = aisci_beadcomm_allgather(bc, width, mine, all);
  long bad = 0;
  if (*status == AISCI_OK)
    for (int j = 0; j < nbeads; j++)
      for (int i = 0; i < n; i++)
        for (int c = 0; c < width; c++)
          bad += all[((size_t) j * n + i) * width + c] != value(tags[i], j, c) + offset;
  free(mine);
  free(all);
  return bad;
}

static int all_equal_int(int x)
{
  int lo, hi;
  MPI_Allreduce(&x, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&x, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

static void test_partitioning(int nbeads)
{
  const int wsize = usize / nbeads, bead = urank / wsize;
  MPI_Comm world;
  MPI_Comm_split(MPI_COMM_WORLD, bead, urank, &world);
  int wrank;
  MPI_Comm_rank(world, &wrank);
  aisci_beadcomm *bc = NULL;
  aisci_status st = aisci_beadcomm_create(MPI_COMM_WORLD, world, nbeads, bead, &bc);
  CHECK(st == AISCI_OK && bc, "P=%d x %d: create: %s", nbeads, wsize, aisci_last_error());
  if (!bc) {
    MPI_Comm_free(&world);
    return;
  }
  int64_t tags[NTAGS + 1]; /* + 1: room for the orphan tag below */
  long bad;
  long rebuilds0 = aisci_beadcomm_nrebuilds(bc);

  /* round 1: random distribution, one rank of bead 1 empty */
  int n = my_atoms(bead, wrank, wsize, 1, 0, tags);
  CHECK(aisci_beadcomm_set_atoms(bc, n, tags) == AISCI_OK, "set_atoms");
  bad = check_gather(bc, nbeads, bead, n, tags, 3, 0.0, &st);
  CHECK(st == AISCI_OK && bad == 0, "P=%d x %d round 1: status %d, %ld wrong values (%s)", nbeads,
        wsize, (int) st, bad, aisci_last_error());
  CHECK(aisci_beadcomm_nrebuilds(bc) == rebuilds0 + 1, "round 1 planned %ld times",
        aisci_beadcomm_nrebuilds(bc) - rebuilds0);
  /* the fix-up path is exercised: with several ranks per bead most atoms need one */
  int nfix = aisci_beadcomm_nfixups(bc), totfix;
  MPI_Allreduce(&nfix, &totfix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (nbeads > 1 && wsize > 1) CHECK(totfix > 0, "P=%d x %d: random distributions needed no fix-ups", nbeads, wsize);
  else CHECK(totfix == 0, "P=%d x %d: %d fix-ups with one rank per bead or one bead", nbeads, wsize, totfix);

  /* same atoms, new values and other widths: no replanning */
  bad = check_gather(bc, nbeads, bead, n, tags, 1, 0.5, &st);
  CHECK(st == AISCI_OK && bad == 0, "width 1: status %d, %ld wrong", (int) st, bad);
  bad = check_gather(bc, nbeads, bead, n, tags, 7, -2.0, &st);
  CHECK(st == AISCI_OK && bad == 0, "width 7: status %d, %ld wrong", (int) st, bad);
  CHECK(aisci_beadcomm_nrebuilds(bc) == rebuilds0 + 1, "replanned without a change of atoms");

  /* round 2: a new random distribution (atoms migrated) */
  n = my_atoms(bead, wrank, wsize, 2, -1, tags);
  aisci_beadcomm_set_atoms(bc, n, tags);
  bad = check_gather(bc, nbeads, bead, n, tags, 3, 1.0, &st);
  CHECK(st == AISCI_OK && bad == 0, "P=%d x %d round 2: status %d, %ld wrong", nbeads, wsize, (int) st, bad);
  CHECK(aisci_beadcomm_nrebuilds(bc) == rebuilds0 + 2, "round 2 must replan once");

  /* only universe rank 0 reorders its atoms: everyone must replan consistently */
  if (urank == 0 && n > 1) {
    int64_t t = tags[0];
    memmove(tags, tags + 1, sizeof(int64_t) * (n - 1));
    tags[n - 1] = t;
    aisci_beadcomm_set_atoms(bc, n, tags);
  }
  bad = check_gather(bc, nbeads, bead, n, tags, 3, 2.0, &st);
  CHECK(st == AISCI_OK && bad == 0, "after one rank reordered: status %d, %ld wrong", (int) st, bad);
  CHECK(all_equal_int((int) aisci_beadcomm_nrebuilds(bc)), "ranks disagree on the number of plans");

  /* round 3: every partition uses the same distribution: no fix-ups at all */
  n = my_atoms(bead, wrank, wsize, -3, -1, tags);
  aisci_beadcomm_set_atoms(bc, n, tags);
  bad = check_gather(bc, nbeads, bead, n, tags, 2, 3.0, &st);
  CHECK(st == AISCI_OK && bad == 0, "same distribution: status %d, %ld wrong", (int) st, bad);
  nfix = aisci_beadcomm_nfixups(bc);
  MPI_Allreduce(&nfix, &totfix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(totfix == 0, "identical distributions still needed %d fix-ups", totfix);

  /* allgather_flag: the same values, and the range of the flags over the universe */
  {
    double *mine = malloc(sizeof(double) * 3 * (n ? n : 1));
    double *all = malloc(sizeof(double) * 3 * (size_t) nbeads * (n ? n : 1));
    for (int i = 0; i < 3 * n; i++) mine[i] = value(tags[i / 3], bead, i % 3);
    int fmin = -9, fmax = -9;
    long wrong = 0;
    st = aisci_beadcomm_allgather_flag(bc, 3, mine, all, bead, &fmin, &fmax);
    for (int j = 0; j < nbeads; j++)
      for (int i = 0; i < 3 * n; i++) wrong += all[(size_t) j * 3 * n + i] != value(tags[i / 3], j, i % 3);
    CHECK(st == AISCI_OK && wrong == 0 && fmin == 0 && fmax == nbeads - 1,
          "allgather_flag: status %d, %ld wrong, flags %d..%d", (int) st, wrong, fmin, fmax);
    st = aisci_beadcomm_allgather_flag(bc, 3, mine, all, 7, &fmin, NULL);
    CHECK(st == AISCI_OK && fmin == 7, "allgather_flag, equal flags: status %d, min %d", (int) st, fmin);
    free(mine);
    free(all);
  }

  /* sum over the universe */
  double in[2] = {(double) urank, 1.0}, out[2] = {0, 0};
  CHECK(aisci_beadcomm_sum_universe(bc, 2, in, out) == AISCI_OK, "sum_universe");
  CHECK(out[0] == usize * (usize - 1) / 2.0 && out[1] == usize, "sum_universe: %g %g", out[0], out[1]);
  CHECK(aisci_beadcomm_sum_universe(bc, 0, NULL, NULL) == AISCI_OK, "sum_universe of nothing");

  /* a tag that no other partition has (rank 0 of bead 0 adds it): every rank must fail with
   * AISCI_ERR_MISSING (so that callers can stop all ranks together), then recover */
  if (nbeads > 1) {
    int n2 = n;
    if (bead == 0 && wrank == 0) tags[n2++] = 999999999;
    aisci_beadcomm_set_atoms(bc, n2, tags);
    bad = check_gather(bc, nbeads, bead, n2, tags, 3, 0.0, &st);
    CHECK(st == AISCI_ERR_MISSING, "P=%d x %d orphan tag: status %d on universe rank %d", nbeads,
          wsize, (int) st, urank);
    /* every rank names the atom and a partition that lacks it (partition 1: the tag is
     * in partition 0 only) */
    CHECK(strcmp(aisci_last_error(), "atom tag 999999999 is not present in partition 1") == 0,
          "orphan tag message on rank %d: '%s'", urank, aisci_last_error());
    int64_t mtag = -1;
    int mpart = -1;
    CHECK(aisci_beadcomm_missing(bc, &mtag, &mpart) == 1 && mtag == 999999999 && mpart == 1,
          "missing(): %lld in partition %d", (long long) mtag, mpart);
    aisci_beadcomm_set_atoms(bc, n, tags);
    bad = check_gather(bc, nbeads, bead, n, tags, 3, 4.0, &st);
    CHECK(st == AISCI_OK && bad == 0, "recovery after the orphan tag: status %d, %ld wrong (%s)",
          (int) st, bad, aisci_last_error());
    CHECK(aisci_beadcomm_missing(bc, NULL, NULL) == 0, "missing() after recovery");
  }

  /* agree: equal values, then one value that differs in the last partition */
  {
    double v[3] = {1.5, -2.0, 1e6}, lo = 0, hi = 0;
    int index = 7;
    CHECK(aisci_agree(MPI_COMM_WORLD, 3, v, 0.0, 0.0, &index, &lo, &hi) == AISCI_OK && index == -1,
          "agree on equal values: index %d", index);
    if (bead == nbeads - 1) v[1] = -3.0;
    if (bead == 0) v[2] = 1e6 * (1.0 + 1e-14);
    st = aisci_agree(MPI_COMM_WORLD, 3, v, 1e-12, 30.0, &index, &lo, &hi);
    if (nbeads > 1)
      CHECK(st == AISCI_OK && index == 1 && lo == -3.0 && hi == -2.0,
            "agree on a differing value: status %d index %d (%g, %g)", (int) st, index, lo, hi);
    st = aisci_agree(MPI_COMM_WORLD, 3, v, 0.0, 0.0, &index, NULL, NULL);
    if (nbeads > 1)
      CHECK(st == AISCI_OK && index == 1, "agree, exact: index %d", index);
    CHECK(aisci_agree(MPI_COMM_WORLD, 0, NULL, 0.0, 0.0, &index, NULL, NULL) == AISCI_OK && index == -1,
          "agree on nothing");
    CHECK(aisci_agree(MPI_COMM_WORLD, 3, NULL, 0.0, 0.0, &index, NULL, NULL) == AISCI_ERR_ARG, "agree NULL values");
    CHECK(aisci_agree(MPI_COMM_WORLD, 3, v, -1.0, 0.0, &index, NULL, NULL) == AISCI_ERR_ARG, "agree rtol < 0");
    CHECK(aisci_agree(MPI_COMM_WORLD, 3, v, 0.0, 0.0, NULL, NULL, NULL) == AISCI_ERR_ARG, "agree NULL index");
  }

  /* a tag twice in one rank's list: AISCI_ERR_ARG naming the tag (local, before any
   * communication); the previous atom set stays in place, so no replanning follows */
  if (n >= 2) {
    int64_t twice[NTAGS + 1];
    memcpy(twice, tags, sizeof(int64_t) * n);
    twice[n - 1] = twice[0];
    long before = aisci_beadcomm_nrebuilds(bc);
    st = aisci_beadcomm_set_atoms(bc, n, twice);
    char want[32];
    snprintf(want, sizeof(want), "%lld", (long long) tags[0]);
    CHECK(st == AISCI_ERR_ARG, "duplicate tag: status %d", (int) st);
    CHECK(strstr(aisci_last_error(), want) != NULL, "duplicate tag message must name tag %s: '%s'", want,
          aisci_last_error());
    bad = check_gather(bc, nbeads, bead, n, tags, 3, 5.0, &st);
    CHECK(st == AISCI_OK && bad == 0, "after a rejected set_atoms: status %d, %ld wrong", (int) st, bad);
    CHECK(aisci_beadcomm_nrebuilds(bc) == before, "a rejected set_atoms caused a replan");
  }

  /* argument errors (local, no communication) */
  CHECK(aisci_beadcomm_sum_universe(bc, 2, NULL, out) == AISCI_ERR_ARG, "sum_universe NULL input");
  CHECK(aisci_beadcomm_sum_universe(bc, 2, in, NULL) == AISCI_ERR_ARG, "sum_universe NULL output");
  CHECK(aisci_beadcomm_sum_universe(bc, -1, in, out) == AISCI_ERR_ARG, "sum_universe n < 0");
  CHECK(aisci_beadcomm_sum_universe(NULL, 2, in, out) == AISCI_ERR_ARG, "sum_universe NULL exchange");
  CHECK(aisci_beadcomm_allgather(bc, 0, NULL, NULL) == AISCI_ERR_ARG, "allgather width 0");
  CHECK(aisci_beadcomm_allgather(NULL, 3, NULL, NULL) == AISCI_ERR_ARG, "allgather NULL");
  CHECK(aisci_beadcomm_set_atoms(bc, -1, tags) == AISCI_ERR_ARG, "set_atoms n < 0");
  CHECK(aisci_beadcomm_set_atoms(bc, 2, NULL) == AISCI_ERR_ARG, "set_atoms NULL tags");
  CHECK(aisci_beadcomm_set_atoms(NULL, 0, NULL) == AISCI_ERR_ARG, "set_atoms NULL exchange");
  aisci_beadcomm_destroy(bc);
  MPI_Comm_free(&world);
}

static void test_create_errors(void)
{
  aisci_beadcomm *bc = (aisci_beadcomm *) &bc;
  /* bead index out of range on every rank: ERR_ARG before any communication */
  CHECK(aisci_beadcomm_create(MPI_COMM_WORLD, MPI_COMM_WORLD, 1, 1, &bc) == AISCI_ERR_ARG && !bc,
        "bead = nbeads");
  CHECK(aisci_beadcomm_create(MPI_COMM_WORLD, MPI_COMM_WORLD, 0, 0, &bc) == AISCI_ERR_ARG, "nbeads = 0");
  CHECK(aisci_beadcomm_create(MPI_COMM_WORLD, MPI_COMM_WORLD, 1, 0, NULL) == AISCI_ERR_ARG, "NULL output");
  /* two beads declared but one partition holds every rank */
  bc = (aisci_beadcomm *) &bc;
  aisci_status st = aisci_beadcomm_create(MPI_COMM_WORLD, MPI_COMM_WORLD, 2, 0, &bc);
  CHECK(st == AISCI_ERR_MPI && !bc, "2 beads in one partition: status %d", (int) st);
  if (usize >= 2) {
    /* P partitions of one rank, but every rank claims bead 0 */
    MPI_Comm self;
    MPI_Comm_split(MPI_COMM_WORLD, urank, 0, &self);
    bc = (aisci_beadcomm *) &bc;
    st = aisci_beadcomm_create(MPI_COMM_WORLD, self, usize, 0, &bc);
    CHECK(st == AISCI_ERR_MPI && !bc, "bead numbering not a permutation: status %d", (int) st);
    MPI_Comm_free(&self);
  }
  if (usize >= 3) {
    /* unequal partitions: {0} and {1, ..., usize-1} */
    int color = urank == 0 ? 0 : 1;
    MPI_Comm world;
    MPI_Comm_split(MPI_COMM_WORLD, color, urank, &world);
    bc = (aisci_beadcomm *) &bc;
    st = aisci_beadcomm_create(MPI_COMM_WORLD, world, 2, color, &bc);
    CHECK(st == AISCI_ERR_MPI && !bc, "unequal partition sizes: status %d on rank %d", (int) st, urank);
    CHECK(strstr(aisci_last_error(), "same number of ranks") != NULL, "message: '%s'", aisci_last_error());
    MPI_Comm_free(&world);
  }
  aisci_beadcomm_destroy(NULL);
  CHECK(aisci_beadcomm_nfixups(NULL) == 0 && aisci_beadcomm_nrebuilds(NULL) == 0, "diagnostics of NULL");
}

/* agree with a timeout: rank 0 joins alone and gives up with AISCI_ERR_MPI; the others
 * join later (their Allreduce completes with rank 0's posted contribution). */
static void test_agree_timeout(void)
{
  if (usize < 2) return;
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  double v[2] = {1.0, 2.0};
  int index = 5;
  if (urank == 0) {
    aisci_status st = aisci_agree(comm, 2, v, 0.0, 0.2, &index, NULL, NULL);
    CHECK(st == AISCI_ERR_MPI && strstr(aisci_last_error(), "did not join within 0.2 s"),
          "agree timeout: status %d '%s'", (int) st, aisci_last_error());
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (urank != 0) {
    aisci_status st = aisci_agree(comm, 2, v, 0.0, 0.0, &index, NULL, NULL);
    CHECK(st == AISCI_OK && index == -1, "late ranks of the timed-out agree: status %d", (int) st);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  /* the late ranks completed the Allreduce: rank 0's abandoned one completes too once it
   * is tested, and its buffer is freed (LeakSanitizer checks that nothing is left) */
  if (urank == 0) {
    CHECK(aisci_agree_reap() <= 1, "one abandoned agree at most");
    int left = 1;
    for (int k = 0; k < 100000 && left; k++) left = aisci_agree_reap();
    CHECK(left == 0, "abandoned agree completed after the late ranks joined: %d left", left);
  }
  CHECK(aisci_agree_reap() == 0, "nothing pending on rank %d", urank);
  MPI_Comm_free(&comm);
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &urank);
  MPI_Comm_size(MPI_COMM_WORLD, &usize);
  aisci_test_quiet = urank != 0;
  for (int P = 1; P <= usize; P++)
    if (usize % P == 0) test_partitioning(P);
  test_create_errors();
  test_agree_timeout();
  /* every rank's failures count */
  int local[2] = {aisci_test_passed, aisci_test_failed}, total[2];
  MPI_Allreduce(local, total, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  aisci_test_passed = total[0];
  aisci_test_failed = total[1];
  int rc = aisci_test_summary("test_beadcomm");
  MPI_Finalize();
  return rc;
}
