#include "aisci_test.h"

int aisci_test_passed = 0;
int aisci_test_failed = 0;
int aisci_test_quiet = 0;

int aisci_test_summary(const char *name)
{
  if (!aisci_test_quiet) printf("%s: %d passed, %d failed\n", name, aisci_test_passed, aisci_test_failed);
  return aisci_test_failed == 0 && aisci_test_passed > 0 ? 0 : 1;
}
