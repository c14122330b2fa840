/* A very small test harness for the C tests: CHECK records a failure and continues;
 * aisci_test_summary() prints "N passed, M failed" and returns the exit code. */
#ifndef AISCI_TEST_H
#define AISCI_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

extern int aisci_test_passed;
extern int aisci_test_failed;
extern int aisci_test_quiet;

#define CHECK(cond, ...)                                                                       \
  do {                                                                                         \
    if (cond) {                                                                                \
      aisci_test_passed++;                                                                     \
    } else {                                                                                   \
      aisci_test_failed++;                                                                     \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);               \
      fprintf(stderr, __VA_ARGS__);                                                            \
      fprintf(stderr, "\n");                                                                   \
    }                                                                                          \
  } while (0)

/* |a - b| <= tol, printing both on failure */
#define CHECK_CLOSE(a, b, tol, what)                                                           \
  CHECK(fabs((double) (a) - (double) (b)) <= (tol), "%s: %.12g vs %.12g (tol %.3g)", what,     \
        (double) (a), (double) (b), (double) (tol))

int aisci_test_summary(const char *name);

/* splitmix64 stream for test data (tests are single-threaded): a test sets the state to
 * its own seed at the start of main(), and may save and restore it */
extern uint64_t aisci_test_rng_state;
uint64_t aisci_test_rand64(void);
double aisci_test_urand(void);  /* uniform in [0, 1) */
double aisci_test_srand1(void); /* uniform in [-1, 1) */

#endif
