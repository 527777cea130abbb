/* A header for test_status_docs_catches: check-status-docs.py must refuse
 * it, since uk_bad_call's comment names no status. */
#include "ukern/ukern.h"

/* Names one: UK_ERR_INVALID for NULL out. */
UK_API uk_status uk_good_call(int *out);
/* Names none. */
UK_API uk_status uk_bad_call(int *out);
