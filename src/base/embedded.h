/* Files embedded into the library at build time (cmake/embed.cmake), so the
 * installed library reads no template or header files. */
#ifndef UK_BASE_EMBEDDED_H
#define UK_BASE_EMBEDDED_H

#include <stddef.h>

typedef struct uk__embedded_file {
  const char *name; /* path relative to templates/, e.g. "ukern/complex.cuh" */
  const char *data; /* NUL-terminated */
  size_t size;      /* without the NUL */
} uk__embedded_file;

/* Device headers (templates/ukern/ *.cuh): handed to every NVRTC program
 * under their include names. */
extern const uk__embedded_file uk__embedded_headers[];
extern const int uk__embedded_header_count;
/* 32 hex digits of a SHA-256 over the headers' names, sizes and contents,
 * made at build time: the cache key names the headers by it. */
extern const char uk__embedded_headers_digest[];
/* Kernel templates (templates/ *.cu). */
extern const uk__embedded_file uk__embedded_templates[];
extern const int uk__embedded_template_count;

/* A template or header by name; NULL if absent. */
const uk__embedded_file *uk__embedded_find(const char *name);

#endif
