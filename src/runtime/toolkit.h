/* What the CUDA toolkit in use tells the files that find its other parts
 * (link.c: nvJitLink and libcudadevrt.a beside it; std_headers.c: libcu++'s
 * headers): NVRTC's include directories and version. nvrtc.c knows them
 * (uk__nvrtc_toolkit in compile.h) and its callers pass them in, so those
 * files stand below NVRTC's. Types only. */
#ifndef UK_RUNTIME_TOOLKIT_H
#define UK_RUNTIME_TOOLKIT_H

typedef struct uk__toolkit {
  const char *const *include_dirs; /* borrowed static strings; NULL when none was found */
  int num_include_dirs;
  int nvrtc_version; /* major * 1000 + minor * 10; 0: unknown */
} uk__toolkit;

#endif
