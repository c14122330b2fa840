/* Environment payloads as star graphs (aisci_ringlb_star_graph / _star_results): the
 * graph reproduces every environment (types, edge_index rows, edge vectors, triplets in
 * the aisci/graph.h order against a brute-force count), and a toy graph model with pair
 * and three-body terms, run on the star graph with the model C API's force convention
 * (F_i += g_e, F_j -= g_e), gives through star_results the same per-environment energy
 * and gradient as evaluating each environment directly. Empty input, environments
 * without neighbours, and every argument error with its exact status. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aisci/ringlb.h"
#include "aisci_test.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double uniform(void)
{
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double) ((rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

#define RC3 2.0
static const double w_pair[2][2] = {{0.7, 0.3}, {0.3, 0.2}};
static const double lambda3 = 0.05;

/* direct evaluation of one environment: E and dE/dv per neighbour */
static void direct(const double *env, double *res)
{
  const int ti = (int) env[0], n = (int) env[1];
  double e = 0.0;
  for (int j = 0; j < n; j++) {
    const double *v = env + 2 + 4 * j;
    const double r2 = v[1] * v[1] + v[2] * v[2] + v[3] * v[3], w = w_pair[ti][(int) v[0]] * exp(-r2);
    e += w;
    for (int k = 0; k < 3; k++) res[1 + 3 * j + k] = -2.0 * w * v[1 + k];
  }
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++) {
      const double *va = env + 2 + 4 * a, *vb = env + 2 + 4 * b;
      if (a == b || va[1] * va[1] + va[2] * va[2] + va[3] * va[3] >= RC3 * RC3 ||
          vb[1] * vb[1] + vb[2] * vb[2] + vb[3] * vb[3] >= RC3 * RC3)
        continue;
      e += lambda3 * (va[1] * vb[1] + va[2] * vb[2] + va[3] * vb[3]);
      for (int k = 0; k < 3; k++) {
        res[1 + 3 * a + k] += lambda3 * vb[1 + k];
        res[1 + 3 * b + k] += lambda3 * va[1 + k];
      }
    }
  res[0] = e;
}

/* the same model on a graph, with the model C API's conventions */
static void graph_model(int64_t n_atoms, const int64_t *types, int64_t ne, const int64_t *ei,
                        const double *ev, int64_t nt, const int64_t *tr, double *pae, double *f)
{
  double *g = calloc((size_t) (3 * ne + 1), sizeof(double));
  for (int64_t i = 0; i < n_atoms; i++) pae[i] = 0.0;
  for (int64_t e = 0; e < ne; e++) {
    const double *v = ev + 3 * e;
    const double r2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    const double w = w_pair[types[ei[e]]][types[ei[ne + e]]] * exp(-r2);
    pae[ei[e]] += w;
    for (int k = 0; k < 3; k++) g[3 * e + k] += -2.0 * w * v[k];
  }
  for (int64_t t = 0; t < nt; t++) {
    const int64_t a = tr[2 * t], b = tr[2 * t + 1];
    const double *va = ev + 3 * a, *vb = ev + 3 * b;
    pae[ei[a]] += lambda3 * (va[0] * vb[0] + va[1] * vb[1] + va[2] * vb[2]);
    for (int k = 0; k < 3; k++) {
      g[3 * a + k] += lambda3 * vb[k];
      g[3 * b + k] += lambda3 * va[k];
    }
  }
  for (int64_t i = 0; i < 3 * n_atoms; i++) f[i] = 0.0;
  for (int64_t e = 0; e < ne; e++)
    for (int k = 0; k < 3; k++) {
      f[3 * ei[e] + k] += g[3 * e + k];
      f[3 * ei[ne + e] + k] -= g[3 * e + k];
    }
  free(g);
}

static void test_roundtrip(int n_env)
{
  int64_t *off = malloc(sizeof(int64_t) * (n_env + 1)), *roff = malloc(sizeof(int64_t) * (n_env + 1));
  double *env = malloc(sizeof(double) * (size_t) (2 + 4 * 12) * (n_env + 1));
  off[0] = roff[0] = 0;
  int64_t want_edges = 0, want_trip = 0;
  for (int c = 0; c < n_env; c++) {
    const int n = c % 5 == 4 ? 0 : (int) (12 * uniform());
    double *e = env + off[c];
    e[0] = (double) (c % 2);
    e[1] = n;
    int nshort = 0;
    for (int j = 0; j < n; j++) {
      e[2 + 4 * j] = (double) (uniform() < 0.5);
      double r2 = 0.0;
      for (int k = 0; k < 3; k++) {
        e[3 + 4 * j + k] = 6.0 * uniform() - 3.0;
        r2 += e[3 + 4 * j + k] * e[3 + 4 * j + k];
      }
      nshort += r2 < RC3 * RC3;
    }
    want_edges += n;
    want_trip += (int64_t) nshort * (nshort - 1);
    off[c + 1] = off[c] + 2 + 4 * n;
    roff[c + 1] = roff[c] + 1 + 3 * n;
  }
  int64_t na = -1, ne = -1, nt = -1;
  CHECK(aisci_ringlb_star_graph(n_env, off, env, RC3, &na, &ne, &nt, NULL, NULL, NULL, NULL) == AISCI_OK,
        "sizes: %s", aisci_last_error());
  CHECK(na == n_env + want_edges && ne == want_edges && nt == want_trip,
        "sizes %lld %lld %lld, want %lld %lld %lld", (long long) na, (long long) ne, (long long) nt,
        (long long) (n_env + want_edges), (long long) want_edges, (long long) want_trip);
  int64_t *types = malloc(sizeof(int64_t) * (na + 1)), *ei = malloc(sizeof(int64_t) * (2 * ne + 1));
  int64_t *tr = malloc(sizeof(int64_t) * (2 * nt + 1));
  double *ev = malloc(sizeof(double) * (3 * ne + 1));
  CHECK(aisci_ringlb_star_graph(n_env, off, env, RC3, NULL, NULL, NULL, types, ei, ev, tr) == AISCI_OK,
        "fill: %s", aisci_last_error());
  /* the graph reproduces the environments */
  long bad = 0;
  int64_t e = 0;
  for (int c = 0; c < n_env; c++) {
    const double *en = env + off[c];
    bad += types[c] != (int64_t) en[0];
    for (int j = 0; j < (int) en[1]; j++, e++) {
      bad += ei[e] != c || ei[ne + e] != n_env + e || types[n_env + e] != (int64_t) en[2 + 4 * j];
      for (int k = 0; k < 3; k++) bad += ev[3 * e + k] != en[3 + 4 * j + k];
    }
  }
  CHECK(bad == 0, "n_env %d: %ld graph entries differ from the environments", n_env, bad);
  /* triplets: same centre, different edges, both short, sorted by (e1, e2) */
  long badt = 0;
  for (int64_t t = 0; t < nt; t++) {
    const int64_t a = tr[2 * t], b = tr[2 * t + 1];
    const double ra = sqrt(ev[3 * a] * ev[3 * a] + ev[3 * a + 1] * ev[3 * a + 1] + ev[3 * a + 2] * ev[3 * a + 2]);
    const double rb = sqrt(ev[3 * b] * ev[3 * b] + ev[3 * b + 1] * ev[3 * b + 1] + ev[3 * b + 2] * ev[3 * b + 2]);
    badt += a == b || ei[a] != ei[b] || ra >= RC3 || rb >= RC3;
    if (t > 0) badt += tr[2 * t - 2] > a || (tr[2 * t - 2] == a && tr[2 * t - 1] >= b);
  }
  CHECK(badt == 0, "n_env %d: %ld bad triplets", n_env, badt);

  /* the model on the star graph, results back per environment */
  double *pae = malloc(sizeof(double) * (na + 1)), *f = malloc(sizeof(double) * (3 * na + 1));
  graph_model(na, types, ne, ei, ev, nt, tr, pae, f);
  double *res = malloc(sizeof(double) * (roff[n_env] + 1)), *ref = malloc(sizeof(double) * (roff[n_env] + 1));
  CHECK(aisci_ringlb_star_results(n_env, off, env, pae, f, roff, res) == AISCI_OK, "results: %s",
        aisci_last_error());
  double maxdiff = 0.0;
  for (int c = 0; c < n_env; c++) direct(env + off[c], ref + roff[c]);
  for (int64_t k = 0; k < roff[n_env]; k++) {
    const double d = fabs(res[k] - ref[k]) / (1.0 + fabs(ref[k]));
    if (d > maxdiff) maxdiff = d;
  }
  CHECK(maxdiff <= 1e-14, "n_env %d: star graph vs direct evaluation differ by %g", n_env, maxdiff);
  free(off), free(roff), free(env), free(types), free(ei), free(tr), free(ev), free(pae), free(f);
  free(res), free(ref);
}

static void test_errors(void)
{
  double env[2 + 4 * 2] = {0, 2, 1, 0.5, 0, 0, 0, 0, 1.0, 0};
  int64_t off[2] = {0, 10}, roff[2] = {0, 7};
  int64_t na, ne, nt, types[3], ei[4], tr[4];
  double ev[6], pae[3] = {1, 2, 3}, f[9] = {0}, res[7];
  CHECK(aisci_ringlb_star_graph(1, off, env, 0.0, &na, &ne, &nt, NULL, NULL, NULL, NULL) == AISCI_OK &&
            na == 3 && ne == 2 && nt == 0,
        "valid environment without triplets");
  CHECK(aisci_ringlb_star_graph(1, off, env, 1.5, &na, &ne, &nt, NULL, NULL, NULL, NULL) == AISCI_OK && nt == 2,
        "two short edges give two ordered triplets, got %lld", (long long) nt);
  CHECK(aisci_ringlb_star_graph(0, NULL, NULL, 0.0, &na, &ne, &nt, NULL, NULL, NULL, NULL) == AISCI_OK &&
            na == 0 && ne == 0,
        "no environments");
  CHECK(aisci_ringlb_star_results(0, NULL, NULL, NULL, NULL, NULL, NULL) == AISCI_OK, "no results");
  CHECK(aisci_ringlb_star_graph(-1, off, env, 0.0, &na, &ne, &nt, NULL, NULL, NULL, NULL) == AISCI_ERR_ARG, "n_env < 0");
  CHECK(aisci_ringlb_star_graph(1, NULL, env, 0.0, &na, &ne, &nt, NULL, NULL, NULL, NULL) == AISCI_ERR_ARG, "NULL offset");
  CHECK(aisci_ringlb_star_graph(1, off, NULL, 0.0, &na, &ne, &nt, NULL, NULL, NULL, NULL) == AISCI_ERR_ARG, "NULL env");
  CHECK(aisci_ringlb_star_graph(1, off, env, -1.0, &na, &ne, &nt, NULL, NULL, NULL, NULL) == AISCI_ERR_ARG, "cutoff_3body < 0");
  CHECK(aisci_ringlb_star_graph(1, off, env, 0.0, NULL, NULL, NULL, types, NULL, ev, NULL) == AISCI_ERR_ARG,
        "edge_index missing");
  int64_t short_off[2] = {0, 6};
  CHECK(aisci_ringlb_star_graph(1, short_off, env, 0.0, &na, &ne, &nt, NULL, NULL, NULL, NULL) == AISCI_ERR_ARG,
        "length != 2 + 4 n");
  CHECK(strstr(aisci_last_error(), "environment 0") != NULL, "message names the environment: %s", aisci_last_error());
  int64_t dec_off[2] = {10, 0};
  CHECK(aisci_ringlb_star_graph(1, dec_off, env, 0.0, &na, &ne, &nt, NULL, NULL, NULL, NULL) == AISCI_ERR_ARG,
        "decreasing offsets");
  env[0] = 0.5;
  CHECK(aisci_ringlb_star_graph(1, off, env, 0.0, &na, &ne, &nt, NULL, NULL, NULL, NULL) == AISCI_ERR_ARG, "type 0.5");
  env[0] = NAN;
  CHECK(aisci_ringlb_star_graph(1, off, env, 0.0, &na, &ne, &nt, NULL, NULL, NULL, NULL) == AISCI_ERR_ARG, "type NaN");
  env[0] = 0;
  env[1] = -2;
  CHECK(aisci_ringlb_star_graph(1, off, env, 0.0, &na, &ne, &nt, NULL, NULL, NULL, NULL) == AISCI_ERR_ARG, "count < 0");
  env[1] = 2;
  env[6] = -1;
  CHECK(aisci_ringlb_star_graph(1, off, env, 0.0, &na, &ne, &nt, NULL, NULL, NULL, NULL) == AISCI_ERR_ARG,
        "neighbour type -1");
  CHECK(strstr(aisci_last_error(), "neighbour 1") != NULL, "message names the neighbour: %s", aisci_last_error());
  env[6] = 0;
  CHECK(aisci_ringlb_star_graph(1, off, env, 1.5, NULL, NULL, NULL, types, ei, ev, tr) == AISCI_OK &&
            ei[0] == 0 && ei[1] == 0 && ei[2] == 1 && ei[3] == 2 && tr[0] == 0 && tr[1] == 1 &&
            tr[2] == 1 && tr[3] == 0,
        "fill");
  int64_t bad_roff[2] = {0, 6};
  CHECK(aisci_ringlb_star_results(1, off, env, pae, f, bad_roff, res) == AISCI_ERR_ARG, "result length 6 for 2 neighbours");
  CHECK(aisci_ringlb_star_results(1, off, env, NULL, f, roff, res) == AISCI_ERR_ARG, "NULL energies");
  CHECK(aisci_ringlb_star_results(1, off, env, pae, NULL, roff, res) == AISCI_ERR_ARG, "NULL forces");
  CHECK(aisci_ringlb_star_results(1, off, env, pae, f, roff, NULL) == AISCI_ERR_ARG, "NULL results");
  f[3] = 1.0, f[4] = 2.0, f[5] = 3.0;
  CHECK(aisci_ringlb_star_results(1, off, env, pae, f, roff, res) == AISCI_OK && res[0] == 1.0 &&
            res[1] == -1.0 && res[2] == -2.0 && res[3] == -3.0,
        "gradient = minus the neighbour's force");
}

int main(void)
{
  test_roundtrip(0);
  test_roundtrip(1);
  test_roundtrip(57);
  test_roundtrip(400);
  test_errors();
  return aisci_test_summary("test_ringlb_star");
}
