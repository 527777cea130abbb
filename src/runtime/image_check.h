/* Checks of untrusted device-code containers (a user's cubin, fatbin,
 * object, static library or LTO-IR) before nvJitLink or the driver reads
 * them: both trust the headers they are given, so a truncated image or one
 * whose header claims more bytes than it has crashes or hangs them
 * (issue 22 item 2).
 *
 * Each check reads only inside [data, data + bytes), in time linear in
 * bytes, at any alignment; it proves the container's structure is in
 * bounds (headers, tables, every offset and size, names terminated), not
 * that the code inside is valid. A failure is UK_ERR_INVALID with
 *   "<what>: malformed <kind> at byte <offset>: <what is wrong>"
 * where the offset counts from the start of the outermost buffer. `what`
 * names the input for the message ("uk_module_link: inputs[1] ('a.cubin')").
 * Thread-safe (no state). */
#ifndef UK_RUNTIME_IMAGE_CHECK_H
#define UK_RUNTIME_IMAGE_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "ukern/ukern.h"

#define UK__FATBIN_MAGIC 0xBA55ED50u
#define UK__LTOIR_MAGIC 0x7F4E43EDu /* NVVM IR container (NVRTC -dlto output) */

/* uk__elf_check flags. */
enum {
  UK__ELF_CUDA = 1,    /* e_machine must be EM_CUDA (a cubin) */
  UK__ELF_FATBINS = 2  /* a host object: its .nv_fatbin sections are checked as fatbins */
};

/* A 64-bit little-endian ELF image: the header, the program and section
 * header tables, every section's contents, the section-name table and each
 * symbol table's string table (terminated), symbols' names and section
 * indices, relocations' symbol indices. `base`: the image's offset in the
 * outermost buffer (for messages). */
uk_status uk__elf_check(const void *data, size_t bytes, uint64_t base, int flags, const char *what);

/* A check of an image embedded in another (its offset `base` in the outermost buffer). */
typedef uk_status (*uk__nested_check)(const void *data, size_t bytes, uint64_t base, const char *what);

/* A host object (UK__ELF_FATBINS): as uk__elf_check, and each .nv_fatbin
 * section checked by `fatbins` (uk__fatbin_check; passed in, so that the
 * ELF and fatbin readers, which contain each other, stay one layer each). */
uk_status uk__elf_check_object(const void *data, size_t bytes, uint64_t base, uk__nested_check fatbins,
                               const char *what);

/* A fatbin: one or more fatbins back to back (header magic, version,
 * header size, the size they claim within the bytes given), every entry's
 * header and payload in bounds, compressed entries' sizes sane, and each
 * cubin entry checked with uk__elf_check (a zstd-compressed one once
 * inflated, up to 64 MiB, when libzstd is there). Bytes after the last
 * fatbin that do not start another are ignored (padding). */
uk_status uk__fatbin_check(const void *data, size_t bytes, uint64_t base, const char *what);

/* A static library (ar): "!<arch>\n", every member header ("`\n" end,
 * decimal size in bounds), and each member that is an ELF object (with its
 * fatbins), a fatbin or LTO-IR checked as such. Thin archives refused. */
uk_status uk__archive_check(const void *data, size_t bytes, const char *what);

/* LTO-IR: NVVM IR container magic (or LLVM bitcode), at least a header. */
uk_status uk__ltoir_check(const void *data, size_t bytes, uint64_t base, const char *what);

/* The check for an input of nvJitLink kind `kind` (UK__LINK_*, link.h):
 * CUBIN, FATBIN, OBJECT, LIBRARY, LTOIR as above; PTX must be non-empty
 * text ending in its NUL at bytes - 1 with no NUL before. */
uk_status uk__image_check(int kind, const void *data, size_t bytes, const char *what);

/* Inflates a zstd frame of n bytes into dst (cap bytes): 1 with *out set,
 * 0 when the frame is damaged or inflates to more than cap, -1 when
 * libzstd is not available (unzstd.c). */
int uk__zstd_inflate(const void *src, size_t n, void *dst, size_t cap, size_t *out);

/* The common failure: "<what>: malformed <kind> at byte <at>: <detail>". */
uk_status uk__image_bad(const char *what, const char *kind, uint64_t at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
