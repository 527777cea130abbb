/* Run-once with an argument (pthread_once takes none): the first caller's
 * argument initialises; every caller returns after that initialisation.
 * For process-wide state whose inputs the caller passes in. */
#ifndef UK_BASE_ONCE_H
#define UK_BASE_ONCE_H

#include <pthread.h>
#include <stdatomic.h>

typedef struct uk__once {
  atomic_int done;
  pthread_mutex_t lock;
} uk__once;

#define UK__ONCE_INIT {0, PTHREAD_MUTEX_INITIALIZER}

static inline void uk__once_run(uk__once *o, void (*fn)(const void *arg), const void *arg) {
  if (atomic_load_explicit(&o->done, memory_order_acquire)) return;
  pthread_mutex_lock(&o->lock);
  if (!atomic_load_explicit(&o->done, memory_order_relaxed)) {
    fn(arg);
    atomic_store_explicit(&o->done, 1, memory_order_release);
  }
  pthread_mutex_unlock(&o->lock);
}

#endif
