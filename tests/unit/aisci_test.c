#include "aisci_test.h"

int aisci_test_passed = 0;
int aisci_test_failed = 0;
int aisci_test_quiet = 0;

int aisci_test_summary(const char *name)
{
  if (!aisci_test_quiet) printf("%s: %d passed, %d failed\n", name, aisci_test_passed, aisci_test_failed);
  return aisci_test_failed == 0 && aisci_test_passed > 0 ? 0 : 1;
}

uint64_t aisci_test_rng_state = 0x1234567887654321ull;

uint64_t aisci_test_rand64(void)
{
  uint64_t z = (aisci_test_rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double aisci_test_urand(void) { return (double) (aisci_test_rand64() >> 11) * (1.0 / 9007199254740992.0); }

double aisci_test_srand1(void) { return 2.0 * aisci_test_urand() - 1.0; }
