/* Status names and messages (generated from UK_STATUS_TABLE), version, uk_free. */
#include <stdlib.h>

#include "ukern/ukern.h"

static const char *const status_names[] = {
#define NAME_(name, msg) #name,
    UK_STATUS_TABLE(NAME_)
#undef NAME_
};

static const char *const status_messages[] = {
#define MSG_(name, msg) msg,
    UK_STATUS_TABLE(MSG_)
#undef MSG_
};

const char *uk_status_name(uk_status s) {
  return (unsigned)s < UK_STATUS_COUNT_ ? status_names[s] : "UK_UNKNOWN_STATUS";
}

const char *uk_status_message(uk_status s) {
  return (unsigned)s < UK_STATUS_COUNT_ ? status_messages[s] : "unknown status";
}

const char *uk_version(void) { return UK_VERSION_STRING; }

void uk_free(void *p) { free(p); }
