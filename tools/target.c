/* Architecture names for display. The library parses and checks targets
 * (uk_options.arch_name, uk_module_options.arch_name); the tool only shows
 * them the way NVRTC spells them. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

const char *cli_arch_name(const char *text, char *buf, size_t size) {
  if (!strncmp(text, "compute_", 8)) snprintf(buf, size, "%s", text);
  else snprintf(buf, size, "sm_%s", strncmp(text, "sm_", 3) ? text : text + 3);
  return buf;
}

const char *cli_arch_option(const char *const *opts, int n) {
  static const char *const forms[] = {"-arch", "--gpu-architecture"};
  for (int j = 0; j < n; j++)
    for (size_t f = 0; f < sizeof forms / sizeof *forms; f++) {
      size_t len = strlen(forms[f]);
      if (strncmp(opts[j], forms[f], len) != 0) continue;
      if (opts[j][len] == '=') return opts[j] + len + 1;
      if (!opts[j][len] && j + 1 < n) return opts[j + 1];
    }
  return NULL;
}

int cli_arch_error(const char *cmd) {
  const char *msg = uk_last_error(), *field = "uk_options.arch_name: ";
  size_t n = strlen(field);
  fprintf(stderr, "ukern %s: --arch: %s\n", cmd, strncmp(msg, field, n) ? msg : msg + n);
  return CLI_USAGE;
}
