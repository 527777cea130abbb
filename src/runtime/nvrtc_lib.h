/* NVRTC, loaded with dlopen at first use instead of linked.
 *
 * Loading libnvrtc costs a new process ~30-40 ms on a 2-core CPU (its static
 * initialisers), before main() even runs when it is linked. A process whose
 * kernels all come from the disk cache never needs it: a disk hit must not
 * touch NVRTC at all. So nvrtc.c calls NVRTC through a table filled on first
 * use (its nvrtc* names are redirected to the table by the macros below),
 * and the cache key's NVRTC version comes from a memo in the disk cache
 * directory, keyed by the identity of the library file that would be loaded.
 *
 * Which file: $UKERN_NVRTC_LIBRARY when set; else the library found at build
 * time when it still exists; else "libnvrtc.so.<major>" through the
 * dynamic loader's search. Only the first two have an identity (device,
 * inode, size, mtime) without loading; the third always loads to learn the
 * version. */
#ifndef UK_RUNTIME_NVRTC_LIB_H
#define UK_RUNTIME_NVRTC_LIB_H

#include <nvrtc.h>

#include "runtime/dcache.h"
#include "ukern/ukern.h"

#define UK__NVRTC_FUNCS(X)                                                               \
  X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcCreateProgram) X(nvrtcDestroyProgram)     \
  X(nvrtcAddNameExpression) X(nvrtcCompileProgram) X(nvrtcGetProgramLogSize)              \
  X(nvrtcGetProgramLog) X(nvrtcGetLoweredName) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN)      \
  X(nvrtcGetPTXSize) X(nvrtcGetPTX) X(nvrtcGetNumSupportedArchs) X(nvrtcGetSupportedArchs)      \
  X(nvrtcGetLTOIRSize) X(nvrtcGetLTOIR)

typedef struct uk__nvrtc_api {
#define UK__NV_MEMBER_(fn) __typeof__(&fn) fn;
  UK__NVRTC_FUNCS(UK__NV_MEMBER_)
#undef UK__NV_MEMBER_
} uk__nvrtc_api;

extern uk__nvrtc_api uk__nv;

/* Loads NVRTC once per process (thread-safe). UK_ERR_COMPILE naming the
 * file when it cannot be loaded; then every entry in uk__nv is set. */
uk_status uk__nvrtc_load(void);
/* Whether NVRTC is loaded in this process. */
int uk__nvrtc_loaded(void);

/* The NVRTC version (major*1000 + minor*10) without loading NVRTC when the
 * memo knows the library file (reading the memos of the directories given
 * to uk__nvrtc_recall_later, on first call); 0 when it does not (the caller
 * loads and asks NVRTC). */
int uk__nvrtc_version_known(void);
/* The architectures NVRTC supports (nvrtcGetSupportedArchs), at most cap:
 * from the memo while NVRTC is not loaded, else from NVRTC (loading it).
 * The count; 0 when unknown (NVRTC cannot be loaded). */
int uk__nvrtc_supported_archs(int *out, int cap);
/* Names a disk cache directory (NULL: the default one) whose memo for the
 * current library file is read, if it is a private one, when the version
 * or the architectures are first needed (a key, an arch check), not now:
 * creating a context does no I/O for it. Call before anything asks NVRTC. */
void uk__nvrtc_recall_later(const char *dir);
/* The same, at once, from an open disk cache (whose directory it checked
 * when it opened): what a compile calls before its key, so that the first
 * key of a process reads one small file. No-op once the version is known
 * or no directory is pending. */
void uk__nvrtc_recall_from(uk__dcache *dc);
/* After NVRTC ran: records its version and architectures for the current
 * library file in the cache's directory (when the memo differs). */
void uk__nvrtc_remember(uk__dcache *dc);

/* A memo's text ("<version>\n<arch> <arch> ...\n", plain decimal numbers)
 * into its version and at most cap architectures: their count, 0 when the
 * text is not a memo (then NVRTC is loaded and asked). */
int uk__nvrtc_memo_parse(const char *text, int *version, int *archs, int cap);

/* The NVRTC file to load: $UKERN_NVRTC_LIBRARY; else libnvrtc.so.<major>
 * in the build's library directory; else where the loader would find it
 * (LD_LIBRARY_PATH, CUDA_HOME/CUDA_PATH, /usr/local/cuda, the system's
 * directories); else the bare soname. id: for a file, its identity as a
 * memo name (nvrtc-<hash of path, device, inode, size, mtime>); "" for the
 * soname (no memo: NVRTC is loaded to learn its version). */
void uk__nvrtc_choose_library(char *path, size_t cap, char *id, size_t id_cap);

/* The build's NVRTC path (UK_BUILD_NVRTC_LIBRARY); tests point it elsewhere. */
extern const char *uk__nvrtc_build_library;

#ifndef UK__NVRTC_LIB_IMPL
/* nvrtc.c calls NVRTC by its own names; they go through the table. */
#define nvrtcVersion (uk__nv.nvrtcVersion)
#define nvrtcGetErrorString (uk__nv.nvrtcGetErrorString)
#define nvrtcCreateProgram (uk__nv.nvrtcCreateProgram)
#define nvrtcDestroyProgram (uk__nv.nvrtcDestroyProgram)
#define nvrtcAddNameExpression (uk__nv.nvrtcAddNameExpression)
#define nvrtcCompileProgram (uk__nv.nvrtcCompileProgram)
#define nvrtcGetProgramLogSize (uk__nv.nvrtcGetProgramLogSize)
#define nvrtcGetProgramLog (uk__nv.nvrtcGetProgramLog)
#define nvrtcGetLoweredName (uk__nv.nvrtcGetLoweredName)
#define nvrtcGetCUBINSize (uk__nv.nvrtcGetCUBINSize)
#define nvrtcGetCUBIN (uk__nv.nvrtcGetCUBIN)
#define nvrtcGetPTXSize (uk__nv.nvrtcGetPTXSize)
#define nvrtcGetPTX (uk__nv.nvrtcGetPTX)
#define nvrtcGetNumSupportedArchs (uk__nv.nvrtcGetNumSupportedArchs)
#define nvrtcGetSupportedArchs (uk__nv.nvrtcGetSupportedArchs)
#define nvrtcGetLTOIRSize (uk__nv.nvrtcGetLTOIRSize)
#define nvrtcGetLTOIR (uk__nv.nvrtcGetLTOIR)
#endif

#endif
