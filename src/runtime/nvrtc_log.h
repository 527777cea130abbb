/* Making a failed compile's NVRTC log point at the user's text (issue 9
 * item 9). The generated source maps user code with #line (codegen/srcmap.h),
 * so NVRTC says `operation(1): error: ...` followed by the line and a caret;
 * this turns the header into `operation:1:9: error: ...` (the column read off
 * the caret) and explains every internal name it mentions:
 * `"_uk_v_z" [_uk_v_z: ukern's name for 'z']`. */
#ifndef UK_RUNTIME_NVRTC_LOG_H
#define UK_RUNTIME_NVRTC_LOG_H

/* Replaces *log (malloc'd, NUL-terminated) by the readable form; leaves it
 * as it is when out of memory. */
void uk__nvrtc_log_readable(char **log);

#endif
