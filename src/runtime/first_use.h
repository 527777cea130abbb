/* Where the statics of a new process's first disk-cache hit live.
 *
 * A zero-initialised static goes to .bss, whose pages a process first
 * touches when it first uses them: a page fault each (two when the first
 * access reads: the zero page, then a copy on the write), a microsecond or
 * more apiece, which was most of what a new process's first disk hit cost
 * beyond 55dd3c5 (bench/tools/newproc_instructions.py). .data is written at
 * start-up (its pointers are relocated) and is small, so statics kept there
 * are in memory before the first call. Only for the few statics that path
 * reads or writes (once flags, the memo, the key's prefix): .data is in the
 * file, unlike .bss. */
#ifndef UK_RUNTIME_FIRST_USE_H
#define UK_RUNTIME_FIRST_USE_H

#if defined(__GNUC__) && defined(__ELF__)
#define UK__FIRST_USE __attribute__((section(".data")))
#else
#define UK__FIRST_USE
#endif

#endif
