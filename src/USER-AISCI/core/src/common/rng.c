/* Philox-4x32-10 counter-based generator and Gaussian deviates built on it. */
#include "aisci_testing/rng.h"

#include <math.h>
#include <pthread.h>

#include "internal.h"

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u /* golden ratio */
#define PHILOX_W1 0xBB67AE85u /* sqrt(3) - 1 */

static inline void mulhilo(uint32_t a, uint32_t b, uint32_t *hi, uint32_t *lo)
{
  uint64_t p = (uint64_t) a * (uint64_t) b;
  *hi = (uint32_t) (p >> 32);
  *lo = (uint32_t) p;
}

/* inlined into the generators below (the exported symbol can be interposed) */
static inline void philox(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4])
{
  uint32_t c0 = counter[0], c1 = counter[1], c2 = counter[2], c3 = counter[3];
  uint32_t k0 = key[0], k1 = key[1];
  for (int round = 0; round < 10; round++) {
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo(PHILOX_M0, c0, &hi0, &lo0);
    mulhilo(PHILOX_M1, c2, &hi1, &lo1);
    uint32_t n0 = hi1 ^ c1 ^ k0;
    uint32_t n1 = lo1;
    uint32_t n2 = hi0 ^ c3 ^ k1;
    uint32_t n3 = lo0;
    c0 = n0;
    c1 = n1;
    c2 = n2;
    c3 = n3;
    k0 += PHILOX_W0;
    k1 += PHILOX_W1;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

void aisci_philox4x32(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4])
{
  philox(counter, key, out);
}

/* uniform in (0, 1], never 0 so that log() is finite */
static inline double u01(uint32_t a)
{
  return ((double) a + 1.0) * (1.0 / 4294967296.0);
}

void aisci_rng_normal4(uint64_t seed, uint64_t c_hi, uint64_t c_lo, double out[4])
{
  const uint32_t key[2] = {(uint32_t) seed, (uint32_t) (seed >> 32)};
  const uint32_t ctr[4] = {(uint32_t) c_lo, (uint32_t) (c_lo >> 32), (uint32_t) c_hi,
                           (uint32_t) (c_hi >> 32)};
  uint32_t r[4];
  philox(ctr, key, r);
  const double two_pi = 2.0 * AISCI_PI;
  for (int i = 0; i < 2; i++) {
    double radius = sqrt(-2.0 * log(u01(r[2 * i])));
    double angle = two_pi * u01(r[2 * i + 1]);
    out[2 * i] = radius * cos(angle);
    out[2 * i + 1] = radius * sin(angle);
  }
}

/* ---- Ziggurat (Marsaglia and Tsang, J. Stat. Softw. 5(8), 2000), 256 layers. Layer 0 is
 * the base strip with the tail beyond R (pseudo-width V / f(R)); layers 1..255 are
 * rectangles of area V with right edges zig_w[i] decreasing towards the top (layer 1),
 * zig_f[i] = f(zig_w[i]), f(x) = exp(-x^2 / 2). A point u * zig_w[i] is accepted at once
 * when u < zig_k[i] (it lies under the next layer's edge). */
#define ZIG_N 256
#define ZIG_R 3.6541528853610088
#define ZIG_V 4.92867323399e-3
static double zig_w[ZIG_N], zig_k[ZIG_N], zig_f[ZIG_N];
static pthread_once_t zig_once = PTHREAD_ONCE_INIT;

static void zig_init(void)
{
  double dn = ZIG_R, tn = ZIG_R;
  const double q = ZIG_V / exp(-0.5 * dn * dn);
  zig_k[0] = dn / q;
  zig_k[1] = 0.0;
  zig_w[0] = q;
  zig_w[ZIG_N - 1] = dn;
  zig_f[0] = 1.0;
  zig_f[ZIG_N - 1] = exp(-0.5 * dn * dn);
  for (int i = ZIG_N - 2; i >= 1; i--) {
    dn = sqrt(-2.0 * log(ZIG_V / dn + exp(-0.5 * dn * dn)));
    zig_k[i + 1] = dn / tn;
    tn = dn;
    zig_f[i] = exp(-0.5 * dn * dn);
    zig_w[i] = dn;
  }
}

/* Further 32-bit words for deviate `lane` after a rejection: Philox blocks with the same
 * counter under the key (seed_lo ^ (lane << 24) ^ block, seed_hi ^ 0x5bd1e995). */
typedef struct {
  uint32_t ctr[4], key[2], buf[4];
  int used, block;
} zig_stream;

static uint32_t zig_next(zig_stream *s)
{
  if (s->used == 4) {
    const uint32_t key[2] = {s->key[0] ^ (uint32_t) ++s->block, s->key[1]};
    philox(s->ctr, key, s->buf);
    s->used = 0;
  }
  return s->buf[s->used++];
}

static double zig_slow(uint32_t bits, zig_stream *s)
{
  for (;;) {
    const int i = (int) (bits & 0xffu);
    const double sign = (bits & 0x100u) ? -1.0 : 1.0;
    const double u = (double) (bits >> 9) * (1.0 / 8388608.0);
    if (u < zig_k[i]) return sign * u * zig_w[i];
    if (i == 0) {
      /* the tail beyond R: Marsaglia's exponential rejection */
      double a, b;
      do {
        a = -log(u01(zig_next(s))) * (1.0 / ZIG_R);
        b = -log(u01(zig_next(s)));
      } while (b + b < a * a);
      return sign * (ZIG_R + a);
    }
    const double x = u * zig_w[i];
    const double y = zig_f[i] + u01(zig_next(s)) * (zig_f[i - 1] - zig_f[i]);
    if (y < exp(-0.5 * x * x)) return sign * x;
    bits = zig_next(s);
  }
}

/* PHILOX_BATCH Philox blocks at once, structure of arrays, for aisci_rng_normal3_n: the
 * rounds of independent blocks overlap (one block alone is latency-bound on its
 * multiplies) and vectorise. Integer arithmetic only, so the clones for wider vector
 * units (32 x 32 -> 64-bit multiplies on 8 or 16 lanes) give the same bits as the default
 * one. */
#define PHILOX_BATCH 16
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void philox_batch(uint32_t *restrict c0, uint32_t *restrict c1, uint32_t *restrict c2,
                         uint32_t *restrict c3, uint32_t k0, uint32_t k1)
{
  for (int round = 0; round < 10; round++) {
    for (int j = 0; j < PHILOX_BATCH; j++) {
      const uint64_t p0 = (uint64_t) PHILOX_M0 * c0[j], p1 = (uint64_t) PHILOX_M1 * c2[j];
      const uint32_t n0 = (uint32_t) (p1 >> 32) ^ c1[j] ^ k0;
      const uint32_t n2 = (uint32_t) (p0 >> 32) ^ c3[j] ^ k1;
      c1[j] = (uint32_t) p1;
      c3[j] = (uint32_t) p0;
      c0[j] = n0;
      c2[j] = n2;
    }
    k0 += PHILOX_W0;
    k1 += PHILOX_W1;
  }
}

/* The slow path of deviate d of the block with counter ctr, for a word the fast path
 * rejected. */
static double zig_reject(uint32_t bits, const uint32_t ctr[4], const uint32_t key[2], int d)
{
  zig_stream s = {{ctr[0], ctr[1], ctr[2], ctr[3]},
                  {key[0] ^ ((uint32_t) d << 24), key[1] ^ 0x5bd1e995u},
                  {0, 0, 0, 0},
                  4,
                  0};
  return zig_slow(bits, &s);
}

/* The ziggurat's fast path on m words: val[j] = +-u * zig_w[i] for the layer i and
 * uniform u of bits[j]; returns a bit mask of the words it rejected (u >= zig_k[i]),
 * which the caller sends to the slow path. The AVX2 version gathers the layer tables for
 * four words at once; both give the same bits (one product and a sign flip each). */
static unsigned zig_fast_scalar(const uint32_t *bits, double *val, int m)
{
  unsigned rejected = 0;
  for (int j = 0; j < m; j++) {
    const int i = (int) (bits[j] & 0xffu);
    const double u = (double) (bits[j] >> 9) * (1.0 / 8388608.0);
    const double v = u * zig_w[i];
    val[j] = (bits[j] & 0x100u) ? -v : v;
    if (!(u < zig_k[i])) rejected |= 1u << j;
  }
  return rejected;
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#include <immintrin.h>
#define ZIG_HAVE_AVX2 1
__attribute__((target("avx2"))) static unsigned zig_fast_avx2(const uint32_t *bits, double *val,
                                                              int m)
{
  unsigned rejected = 0;
  int j = 0;
  const __m128i byte = _mm_set1_epi32(0xff), signbit = _mm_set1_epi32(0x100);
  const __m256d scale = _mm256_set1_pd(1.0 / 8388608.0);
  for (; j + 4 <= m; j += 4) {
    const __m128i b = _mm_loadu_si128((const __m128i *) (bits + j));
    const __m128i layer = _mm_and_si128(b, byte);
    const __m256d u = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm_srli_epi32(b, 9)), scale);
    const __m256d k = _mm256_i32gather_pd(zig_k, layer, 8);
    const __m256d w = _mm256_i32gather_pd(zig_w, layer, 8);
    /* bit 8 of the word -> the sign bit of its double */
    const __m256i sign =
        _mm256_slli_epi64(_mm256_cvtepu32_epi64(_mm_and_si128(b, signbit)), 55);
    const __m256d v = _mm256_xor_pd(_mm256_mul_pd(u, w), _mm256_castsi256_pd(sign));
    _mm256_storeu_pd(val + j, v);
    const unsigned ok = (unsigned) _mm256_movemask_pd(_mm256_cmp_pd(u, k, _CMP_LT_OQ));
    rejected |= (~ok & 0xfu) << j;
  }
  if (j < m) rejected |= zig_fast_scalar(bits + j, val + j, m - j) << j;
  return rejected;
}
#endif

static unsigned (*zig_fast)(const uint32_t *, double *, int) = zig_fast_scalar;

static void zig_init_all(void)
{
  zig_init();
#ifdef ZIG_HAVE_AVX2
  if (__builtin_cpu_supports("avx2")) zig_fast = zig_fast_avx2;
#endif
}

void aisci_rng_normal3_n(uint64_t seed, uint64_t c_hi, int n, const int64_t *c_lo, double *out)
{
  pthread_once(&zig_once, zig_init_all);
  const uint32_t key[2] = {(uint32_t) seed, (uint32_t) (seed >> 32)};
  const uint32_t h0 = (uint32_t) c_hi, h1 = (uint32_t) (c_hi >> 32);
  for (int i0 = 0; i0 < n; i0 += PHILOX_BATCH) {
    const int m = n - i0 < PHILOX_BATCH ? n - i0 : PHILOX_BATCH;
    uint32_t c[4][PHILOX_BATCH];
    for (int j = 0; j < PHILOX_BATCH; j++) {
      const uint64_t lo = (uint64_t) c_lo[i0 + (j < m ? j : 0)];
      c[0][j] = (uint32_t) lo;
      c[1][j] = (uint32_t) (lo >> 32);
      c[2][j] = h0;
      c[3][j] = h1;
    }
    philox_batch(c[0], c[1], c[2], c[3], key[0], key[1]);
    double val[3][PHILOX_BATCH];
    for (int d = 0; d < 3; d++) {
      unsigned rejected = zig_fast(c[d], val[d], m);
      while (rejected) {
        const int j = __builtin_ctz(rejected);
        rejected &= rejected - 1;
        const uint64_t lo = (uint64_t) c_lo[i0 + j];
        const uint32_t ctr[4] = {(uint32_t) lo, (uint32_t) (lo >> 32), h0, h1};
        val[d][j] = zig_reject(c[d][j], ctr, key, d);
      }
    }
    double *o = out + 3 * (size_t) i0;
    for (int j = 0; j < m; j++) {
      o[3 * j] = val[0][j];
      o[3 * j + 1] = val[1][j];
      o[3 * j + 2] = val[2][j];
    }
  }
}

void aisci_rng_normal3(uint64_t seed, uint64_t c_hi, uint64_t c_lo, double out[3])
{
  const int64_t lo = (int64_t) c_lo;
  aisci_rng_normal3_n(seed, c_hi, 1, &lo, out);
}
