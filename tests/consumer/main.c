#include <stdio.h>
#include <string.h>
#include <ukern/ukern.h>

int main(void) {
  uk_dtype t;
  if (uk_dtype_from_name("f4", &t) != UK_OK || t != UK_FLOAT32) return 1;
  if (strcmp(uk_status_name(UK_ERR_SHAPE), "UK_ERR_SHAPE") != 0) return 1;
  printf("ukern %s linked\n", uk_version());
  return 0;
}
