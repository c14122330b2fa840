/* The planning step of the ring balancer (aisci_ringlb_assign, a pure function) without
 * MPI: every rank's assignment is computed here from the same vector of rank totals, and
 * the resulting loads are checked against the guarantee |L'_r - mean| <= c_max (largest
 * item cost), the moved volume (sum of cost x hops) against the optimal continuous
 * circulation, and the hop counts against the round bounds. Cases: random costs, a slab
 * with vacuum (all work on half the ranks), everything on one rank (multi-hop routes), one
 * huge item, ranks already within tolerance, zero work, one rank; every error path. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aisci_testing/ringlb.h"
#include "aisci_test.h"

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static double uniform(void)
{
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double) ((rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

#define MAXR 32

typedef struct {
  int nranks;
  int n[MAXR];
  double *cost[MAXR];
} problem;

static void problem_free(problem *p)
{
  for (int r = 0; r < p->nranks; r++) free(p->cost[r]);
}

typedef struct {
  double mean, max_before, max_after, min_after, cmax, volume, optimal;
  int balanced, rounds[2], max_hops[2];
} outcome;

/* Optimal continuous volume: sum over edges |d_r - median(d)| */
static int cmpd(const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static outcome run(const problem *p, double tol, const char *name)
{
  outcome o;
  memset(&o, 0, sizeof(o));
  const int N = p->nranks;
  double tot[MAXR], after[MAXR], d[MAXR], prefix = 0.0;
  for (int r = 0; r < N; r++) {
    tot[r] = 0.0;
    for (int i = 0; i < p->n[r]; i++) {
      tot[r] += p->cost[r][i];
      if (p->cost[r][i] > o.cmax) o.cmax = p->cost[r][i];
    }
    after[r] = 0.0;
  }
  for (int r = 0; r < N; r++) prefix += tot[r];
  o.mean = prefix / N;
  prefix = 0.0;
  for (int r = 0; r < N; r++) {
    prefix += tot[r];
    d[r] = prefix - (r + 1) * o.mean;
    if (tot[r] > o.max_before) o.max_before = tot[r];
  }
  qsort(d, (size_t) N, sizeof(double), cmpd);
  for (int r = 0; r < N; r++) o.optimal += fabs(d[r] - d[(N - 1) / 2]);

  int first_rounds[2] = {-1, -1};
  for (int r = 0; r < N; r++) {
    int *dest = malloc(sizeof(int) * (size_t) (p->n[r] + 1));
    int *hops = malloc(sizeof(int) * (size_t) (p->n[r] + 1));
    int *dest2 = malloc(sizeof(int) * (size_t) (p->n[r] + 1));
    int rounds[2], bal;
    aisci_status st = aisci_ringlb_assign(N, tot, tol, r, p->n[r], p->cost[r], dest, hops, rounds, &bal);
    CHECK(st == AISCI_OK, "%s: assign rank %d: %s", name, r, aisci_last_error());
    /* deterministic: the same call gives the same plan; outputs may be NULL */
    aisci_ringlb_assign(N, tot, tol, r, p->n[r], p->cost[r], dest2, NULL, NULL, NULL);
    CHECK(p->n[r] == 0 || memcmp(dest, dest2, sizeof(int) * (size_t) p->n[r]) == 0,
          "%s: rank %d: a second call planned differently", name, r);
    if (first_rounds[0] < 0) {
      first_rounds[0] = rounds[0];
      first_rounds[1] = rounds[1];
      o.balanced = bal;
    }
    CHECK(rounds[0] == first_rounds[0] && rounds[1] == first_rounds[1] && bal == o.balanced,
          "%s: rank %d sees other round bounds or balance flag", name, r);
    int wrong = 0;
    for (int i = 0; i < p->n[r]; i++) {
      if (dest[i] != ((r + hops[i]) % N + N) % N || hops[i] <= -N || hops[i] >= N) wrong++;
      if (hops[i] > o.max_hops[0]) o.max_hops[0] = hops[i];
      if (-hops[i] > o.max_hops[1]) o.max_hops[1] = -hops[i];
      after[dest[i]] += p->cost[r][i];
      o.volume += p->cost[r][i] * abs(hops[i]);
    }
    CHECK(wrong == 0, "%s: rank %d: %d items with dest != rank + hops", name, r, wrong);
    free(dest);
    free(hops);
    free(dest2);
  }
  o.rounds[0] = first_rounds[0];
  o.rounds[1] = first_rounds[1];
  o.min_after = INFINITY;
  for (int r = 0; r < N; r++) {
    if (after[r] > o.max_after) o.max_after = after[r];
    if (after[r] < o.min_after) o.min_after = after[r];
  }
  CHECK(o.max_hops[0] <= o.rounds[0] && o.max_hops[1] <= o.rounds[1],
        "%s: hops %d/%d beyond the round bounds %d/%d", name, o.max_hops[0], o.max_hops[1],
        o.rounds[0], o.rounds[1]);
  const double eps = 1e-9 * (o.mean + o.cmax);
  if (o.balanced) {
    CHECK(o.volume == 0.0 && o.rounds[0] == 0 && o.rounds[1] == 0, "%s: balanced but moves %g", name, o.volume);
    CHECK(o.mean == 0.0 || o.max_before <= (1 + tol) * o.mean * (1 + 1e-12),
          "%s: called balanced with max/mean %g", name, o.max_before / o.mean);
  } else {
    /* the guarantee: every rank within c_max of the mean */
    CHECK(o.max_after - o.mean <= o.cmax + eps && o.mean - o.min_after <= o.cmax + eps,
          "%s: loads after %g..%g, mean %g, c_max %g", name, o.min_after, o.max_after, o.mean, o.cmax);
    /* the volume: within half an item per edge of the optimal circulation */
    CHECK(o.volume <= o.optimal + 0.5 * N * o.cmax + eps, "%s: moved %g, optimal %g (c_max %g)",
          name, o.volume, o.optimal, o.cmax);
  }
  if (!aisci_test_quiet)
    printf("%-28s N=%2d max/mean before %.4f after %.4f  moved/total %.3f (optimal %.3f)  rounds %d/%d\n",
         name, N, o.mean > 0 ? o.max_before / o.mean : 0.0, o.mean > 0 ? o.max_after / o.mean : 0.0,
         o.mean > 0 ? o.volume / (o.mean * N) : 0.0, o.mean > 0 ? o.optimal / (o.mean * N) : 0.0,
         o.rounds[0], o.rounds[1]);
  return o;
}

static void fill(problem *p, int r, int n, double lo, double hi)
{
  p->n[r] = n;
  p->cost[r] = malloc(sizeof(double) * (size_t) (n + 1));
  for (int i = 0; i < n; i++) p->cost[r][i] = lo + (hi - lo) * uniform();
}

static void test_random(void)
{
  const int sizes[] = {1, 2, 3, 4, 7, 8, 16, 32};
  for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
    problem p = {.nranks = sizes[k]};
    for (int r = 0; r < p.nranks; r++) fill(&p, r, 200 + (int) (1800 * uniform()), 10.0, 80.0);
    char name[64];
    snprintf(name, sizeof(name), "random");
    outcome o = run(&p, 0.05, name);
    CHECK(o.max_after <= 1.05 * o.mean, "random N=%d: max/mean %g > 1.05", p.nranks, o.max_after / o.mean);
    if (p.nranks == 1) CHECK(o.balanced && o.volume == 0.0, "one rank must never move work");
    problem_free(&p);
  }
}

static void test_slab(void)
{
  const int sizes[] = {2, 4, 8, 16};
  for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
    /* water slab with vacuum: ranks in the slab have ~1000 atoms, the others none */
    problem p = {.nranks = sizes[k]};
    for (int r = 0; r < p.nranks; r++) fill(&p, r, r < p.nranks / 2 ? 1000 : 0, 30.0, 50.0);
    outcome o = run(&p, 0.05, "slab (half the ranks empty)");
    CHECK(!o.balanced && o.max_after <= 1.05 * o.mean, "slab N=%d: max/mean %g", p.nranks,
          o.max_after / o.mean);
    CHECK(o.min_after >= 0.95 * o.mean, "slab N=%d: min/mean %g", p.nranks, o.min_after / o.mean);
    problem_free(&p);
  }
}

static void test_one_rank_has_everything(void)
{
  /* N = 4, all on rank 0, equal costs: the median circulation keeps a quarter, sends a
   * quarter one hop forward, a quarter two hops forward and a quarter one hop back */
  problem p = {.nranks = 4};
  fill(&p, 0, 400, 1.0, 1.0);
  for (int r = 1; r < 4; r++) fill(&p, r, 0, 1.0, 1.0);
  double tot[4] = {400, 0, 0, 0};
  int dest[400], hops[400], rounds[2], bal;
  CHECK(aisci_ringlb_assign(4, tot, 0.05, 0, 400, p.cost[0], dest, hops, rounds, &bal) == AISCI_OK,
        "assign");
  int count[4] = {0, 0, 0, 0}, hcount[5] = {0, 0, 0, 0, 0};
  for (int i = 0; i < 400; i++) {
    count[dest[i]]++;
    if (hops[i] >= -2 && hops[i] <= 2) hcount[hops[i] + 2]++;
  }
  CHECK(count[0] == 100 && count[1] == 100 && count[2] == 100 && count[3] == 100,
        "one rank: counts %d %d %d %d", count[0], count[1], count[2], count[3]);
  CHECK(hcount[1] == 100 && hcount[2] == 100 && hcount[3] == 100 && hcount[4] == 100,
        "one rank: hops -1:%d 0:%d 1:%d 2:%d", hcount[1], hcount[2], hcount[3], hcount[4]);
  CHECK(rounds[0] >= 2 && rounds[0] <= 3 && rounds[1] >= 1 && rounds[1] <= 2 && !bal,
        "one rank: rounds %d/%d", rounds[0], rounds[1]);
  outcome o = run(&p, 0.05, "everything on rank 0");
  CHECK(o.max_after == 100.0 && o.volume == 400.0 && o.optimal == 400.0, "one rank: max %g volume %g",
        o.max_after, o.volume);
  problem_free(&p);

  /* N = 16, all on rank 5 */
  problem q = {.nranks = 16};
  for (int r = 0; r < 16; r++) fill(&q, r, r == 5 ? 3000 : 0, 1.0, 3.0);
  o = run(&q, 0.05, "everything on rank 5");
  CHECK(o.max_after <= 1.05 * o.mean && o.rounds[0] >= 8 && o.rounds[1] >= 7,
        "N=16 one rank: max/mean %g rounds %d/%d", o.max_after / o.mean, o.rounds[0], o.rounds[1]);
  problem_free(&q);
}

static void test_granularity(void)
{
  /* one huge item: the bound is c_max, not the tolerance */
  problem p = {.nranks = 4};
  fill(&p, 0, 1, 500.0, 500.0);
  for (int r = 1; r < 4; r++) fill(&p, r, 100, 0.5, 1.5);
  outcome o = run(&p, 0.05, "one huge item");
  CHECK(!o.balanced && o.max_after <= o.mean + o.cmax, "huge item: max %g mean %g", o.max_after, o.mean);
  CHECK(o.max_after >= 500.0, "the huge item is indivisible");
  problem_free(&p);

  /* few, large items: random */
  for (int rep = 0; rep < 20; rep++) {
    problem q = {.nranks = 2 + rep % 7};
    for (int r = 0; r < q.nranks; r++) fill(&q, r, (int) (6 * uniform()), 0.0, 10.0);
    aisci_test_quiet = 1;
    run(&q, 0.01, "few large items");
    aisci_test_quiet = 0;
    problem_free(&q);
  }
  /* zero-cost items mixed in */
  problem z = {.nranks = 4};
  for (int r = 0; r < 4; r++) fill(&z, r, 50 * (r + 1), 0.0, 2.0);
  for (int i = 0; i < 10; i++) z.cost[3][i] = 0.0;
  z.cost[3][z.n[3] - 1] = 0.0;
  run(&z, 0.05, "zero-cost items");
  problem_free(&z);
}

static void test_tolerance(void)
{
  double tot[2] = {104.0, 96.0}, c[1] = {104.0};
  int bal = -1, rounds[2] = {-1, -1}, hops[1] = {7};
  CHECK(aisci_ringlb_assign(2, tot, 0.05, 0, 1, c, NULL, hops, rounds, &bal) == AISCI_OK && bal == 1 &&
            hops[0] == 0 && rounds[0] == 0 && rounds[1] == 0,
        "within 5%%: balanced %d hops %d rounds %d/%d", bal, hops[0], rounds[0], rounds[1]);
  CHECK(aisci_ringlb_assign(2, tot, 0.03, 0, 1, c, NULL, NULL, NULL, &bal) == AISCI_OK && bal == 0,
        "outside 3%%: balanced %d", bal);
  /* an underloaded rank also counts: 100, 100, 100, 80 is outside 5% */
  double t4[4] = {100, 100, 100, 80};
  CHECK(aisci_ringlb_assign(4, t4, 0.05, 3, 0, NULL, NULL, NULL, NULL, &bal) == AISCI_OK && bal == 0,
        "a rank 15%% below the mean: balanced %d", bal);
  /* no work at all */
  double zero[3] = {0, 0, 0}, zc[2] = {0, 0};
  int dest[2] = {-1, -1};
  CHECK(aisci_ringlb_assign(3, zero, 0.0, 1, 2, zc, dest, NULL, rounds, &bal) == AISCI_OK && bal == 1 &&
            dest[0] == 1 && dest[1] == 1 && rounds[0] == 0,
        "zero work: balanced %d dest %d %d", bal, dest[0], dest[1]);
  /* subnormal costs count as no work (no division by a subnormal mean) */
  double tiny[2] = {1e-310, 0.0}, tc[1] = {1e-310};
  CHECK(aisci_ringlb_assign(2, tiny, 0.05, 0, 1, tc, dest, NULL, rounds, &bal) == AISCI_OK && bal == 1 &&
            dest[0] == 0 && rounds[0] == 0,
        "subnormal costs: balanced %d dest %d", bal, dest[0]);
  /* tolerance 0 with unequal ranks moves work */
  problem p = {.nranks = 3};
  for (int r = 0; r < 3; r++) fill(&p, r, 100 + 50 * r, 1.0, 1.0);
  outcome o = run(&p, 0.0, "tolerance 0, 100/150/200");
  CHECK(!o.balanced && o.max_after == 150.0 && o.min_after == 150.0, "tolerance 0: %g..%g",
        o.min_after, o.max_after);
  problem_free(&p);
}

static void test_errors(void)
{
  double tot[2] = {1, 1}, c[2] = {0.5, 0.5};
  int dest[2];
  CHECK(aisci_ringlb_assign(0, tot, 0.05, 0, 2, c, dest, NULL, NULL, NULL) == AISCI_ERR_ARG, "nranks 0");
  CHECK(aisci_ringlb_assign(2, NULL, 0.05, 0, 2, c, dest, NULL, NULL, NULL) == AISCI_ERR_ARG, "NULL rank_cost");
  CHECK(aisci_ringlb_assign(2, tot, 0.05, -1, 2, c, dest, NULL, NULL, NULL) == AISCI_ERR_ARG, "rank -1");
  CHECK(aisci_ringlb_assign(2, tot, 0.05, 2, 2, c, dest, NULL, NULL, NULL) == AISCI_ERR_ARG, "rank = nranks");
  CHECK(aisci_ringlb_assign(2, tot, -0.1, 0, 2, c, dest, NULL, NULL, NULL) == AISCI_ERR_ARG, "tolerance < 0");
  CHECK(aisci_ringlb_assign(2, tot, NAN, 0, 2, c, dest, NULL, NULL, NULL) == AISCI_ERR_ARG, "tolerance NaN");
  CHECK(aisci_ringlb_assign(2, tot, 0.05, 0, -1, c, dest, NULL, NULL, NULL) == AISCI_ERR_ARG, "n_items < 0");
  CHECK(aisci_ringlb_assign(2, tot, 0.05, 0, 2, NULL, dest, NULL, NULL, NULL) == AISCI_ERR_ARG, "NULL cost");
  double neg[2] = {0.5, -0.5};
  CHECK(aisci_ringlb_assign(2, tot, 0.05, 0, 2, neg, dest, NULL, NULL, NULL) == AISCI_ERR_ARG, "negative cost");
  CHECK(strstr(aisci_last_error(), "item 1") != NULL, "message names the item: '%s'", aisci_last_error());
  double nan_cost[2] = {0.5, NAN};
  CHECK(aisci_ringlb_assign(2, tot, 0.05, 0, 2, nan_cost, dest, NULL, NULL, NULL) == AISCI_ERR_ARG, "NaN cost");
  double inf_cost[2] = {0.5, INFINITY};
  CHECK(aisci_ringlb_assign(2, tot, 0.05, 0, 2, inf_cost, dest, NULL, NULL, NULL) == AISCI_ERR_ARG, "inf cost");
  double badtot[2] = {1, -1};
  CHECK(aisci_ringlb_assign(2, badtot, 0.05, 0, 2, c, dest, NULL, NULL, NULL) == AISCI_ERR_ARG, "negative rank cost");
  CHECK(strstr(aisci_last_error(), "rank 1") != NULL, "message names the rank: '%s'", aisci_last_error());
  double huge[2] = {1e308, 1e308};
  CHECK(aisci_ringlb_assign(2, huge, 0.05, 0, 2, c, dest, NULL, NULL, NULL) == AISCI_ERR_ARG, "total overflows");
  CHECK(aisci_ringlb_assign(2, tot, 0.05, 0, 0, NULL, NULL, NULL, NULL, NULL) == AISCI_OK, "no items, all NULL");
}

int main(void)
{
  test_random();
  test_slab();
  test_one_rank_has_everything();
  test_granularity();
  test_tolerance();
  test_errors();
  return aisci_test_summary("test_ringlb_plan");
}
