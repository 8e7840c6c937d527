/* The data handles' C API compiled as strict C99 (canopy_data.h must stay
 * plain C): allocate with each placement, query, free, use after free. */
#include <stdio.h>
#include <string.h>

#include "canopy_data.h"

int main(void) {
  size_t page = 0, count = 0;
  int nodes = 0, home = -2, k;
  canopy_data_t d = CANOPY_DATA_NULL_INIT;
  canopy_data_placement_t pl;
  void* p = NULL;
  if (canopy_data_page_size(&page) != CANOPY_OK || canopy_data_num_nodes(&nodes) != CANOPY_OK) {
    fprintf(stderr, "machine: %s\n", canopy_last_error());
    return 1;
  }
  for (k = 0; k < 4; ++k) {
    memset(&pl, 0, sizeof pl);
    pl.kind = (canopy_data_placement_kind_t)k;
    pl.block = page;
    if (canopy_data_allocate(&d, 3 * page, &pl) != CANOPY_OK) {
      fprintf(stderr, "allocate kind %d: %s\n", k, canopy_last_error());
      return 1;
    }
    if (canopy_data_ptr(d, &p) != CANOPY_OK || p == NULL) return 1;
    memset(p, 1, 3 * page);
    if (canopy_data_refresh_location(d) != CANOPY_OK || canopy_data_home_node(d, &home) != CANOPY_OK) return 1;
    if (home < 0 || home >= nodes) return 1;
    if (canopy_data_page_nodes(d, NULL, 0, &count) != CANOPY_OK || count != 3) return 1;
    if (canopy_data_check_placement(d, 1) != CANOPY_OK) {
      fprintf(stderr, "check kind %d: %s\n", k, canopy_last_error());
      return 1;
    }
    if (canopy_data_free(d) != CANOPY_OK) return 1;
  }
  if (canopy_data_ptr(d, &p) != CANOPY_EINVAL) return 1;
  printf("canopy_data.h C99 smoke: ok (%d nodes, home %d)\n", nodes, home);
  return 0;
}
