/* Uses libaisci_core through its installed headers only: versions, a PIMD object, an
 * error path with its exact status, a graph. Prints "core <header> <library>" and exits
 * non-zero on any unexpected result. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "aisci/graph.h"
#include "aisci/pimd.h"
#include "aisci/version.h"

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int failed = 0, major = -1, minor = -1, patch = -1;
  const char *lib = aisci_core_api_version(&major, &minor, &patch);
  if (major != AISCI_CORE_API_VERSION_MAJOR || minor != AISCI_CORE_API_VERSION_MINOR ||
      strcmp(lib, AISCI_CORE_API_VERSION) != 0) {
    fprintf(stderr, "version mismatch: header %s, library %s\n", AISCI_CORE_API_VERSION, lib);
    failed = 1;
  }
  aisci_pimd_config cfg = aisci_pimd_config_default();
  aisci_pimd *pimd = NULL;
  if (aisci_pimd_create(&cfg, &pimd) != AISCI_OK || !pimd) {
    fprintf(stderr, "aisci_pimd_create: %s\n", aisci_last_error());
    failed = 1;
  }
  aisci_pimd_destroy(pimd);
  cfg.nbeads = 0;
  pimd = NULL;
  aisci_status st = aisci_pimd_create(&cfg, &pimd);
  if (st != AISCI_ERR_ARG || pimd || strlen(aisci_last_error()) == 0) {
    fprintf(stderr, "nbeads = 0: expected AISCI_ERR_ARG and a message, got %d\n", (int) st);
    failed = 1;
  }
  aisci_graph *g = NULL;
  if (aisci_graph_create(&g) != AISCI_OK || aisci_graph_num_edges(g) != 0) {
    fprintf(stderr, "aisci_graph_create: %s\n", aisci_last_error());
    failed = 1;
  }
  aisci_graph_destroy(g);
  printf("core %s %s\n", AISCI_CORE_API_VERSION, lib);
  MPI_Finalize();
  return failed;
}
