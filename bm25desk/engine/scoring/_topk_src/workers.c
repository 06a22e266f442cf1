/* Threads kept parked between queries for the slices of split traversals (split.c).
 *
 * A thread started per slice and joined after it cost 40 us of CPU and 20-100 us before it ran
 * (measured on the 2-core VMs the benchmarks run on): most of what a split saves on a query of
 * 1 ms. A parked thread is woken by a condition variable instead. Workers are made on first
 * need, up to MAX_WORKERS, and shared by every caller (several Python threads may search at
 * once without the GIL): a caller takes idle ones, hands each a job, and waits for them. When
 * no worker can be had (at the cap, or a thread cannot start), the caller runs the job itself.
 *
 * After fork() the child has none of the parent's threads: it forgets the workers (their
 * memory is left as it is) and makes new ones when it needs them. */
#include "exhaustive.h"

#ifndef _WIN32
#include <pthread.h>

#define MAX_WORKERS 64

typedef enum { W_IDLE, W_JOB, W_DONE } WorkerState;

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a job handed over (W_JOB), or done (W_DONE) */
    WorkerState state;
    void (*fn)(void *);
    void *arg;
    int busy; /* taken by a caller (under pool_mu) */
} Worker;

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static Worker *pool[MAX_WORKERS];
static int npool;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void
fork_prepare(void)
{
    pthread_mutex_lock(&pool_mu);
}

static void
fork_parent(void)
{
    pthread_mutex_unlock(&pool_mu);
}

static void
fork_child(void)
{
    npool = 0; /* (the workers are the parent's threads: none runs here) */
    pthread_mutex_unlock(&pool_mu);
}

static void
register_fork(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void *
worker_main(void *arg)
{
    Worker *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (w->state != W_JOB) {
            pthread_cond_wait(&w->cv, &w->mu);
        }
        pthread_mutex_unlock(&w->mu);
        w->fn(w->arg);
        pthread_mutex_lock(&w->mu);
        w->state = W_DONE;
        pthread_cond_broadcast(&w->cv);
    }
    return NULL;
}

/* A new parked worker, or NULL when its thread cannot start. Called under pool_mu. */
static Worker *
worker_new(void)
{
    Worker *w = calloc(1, sizeof(Worker));
    if (!w) {
        return NULL;
    }
    pthread_attr_t attr;
    pthread_t tid;
    int ok = pthread_mutex_init(&w->mu, NULL) == 0;
    ok = ok && pthread_cond_init(&w->cv, NULL) == 0;
    ok = ok && pthread_attr_init(&attr) == 0;
    if (ok) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        ok = pthread_create(&tid, &attr, worker_main, w) == 0;
        pthread_attr_destroy(&attr);
    }
    if (!ok) {
        free(w); /* (a mutex or condition variable never waited on needs no destroying) */
        return NULL;
    }
    return w;
}

/* An idle worker, taken (busy), or NULL. */
static Worker *
worker_take(void)
{
    pthread_once(&fork_once, register_fork);
    pthread_mutex_lock(&pool_mu);
    Worker *got = NULL;
    for (int i = 0; i < npool && !got; i++) {
        if (!pool[i]->busy) {
            got = pool[i];
        }
    }
    if (!got && npool < MAX_WORKERS && (got = worker_new()) != NULL) {
        pool[npool++] = got;
    }
    if (got) {
        got->busy = 1;
    }
    pthread_mutex_unlock(&pool_mu);
    return got;
}

static void
worker_give(Worker *w)
{
    pthread_mutex_lock(&pool_mu);
    w->busy = 0;
    pthread_mutex_unlock(&pool_mu);
}

void
workers_run(void (*fn)(void *), void *const *args, int n)
{
    Worker *ws[MAX_WORKERS] = {NULL}; /* (jobs beyond MAX_WORKERS run here) */
    for (int i = 1; i < n && i < MAX_WORKERS; i++) {
        Worker *w = ws[i] = worker_take();
        if (w) {
            pthread_mutex_lock(&w->mu);
            w->fn = fn;
            w->arg = args[i];
            w->state = W_JOB;
            pthread_cond_broadcast(&w->cv);
            pthread_mutex_unlock(&w->mu);
        }
    }
    fn(args[0]);
    for (int i = 1; i < n; i++) {
        Worker *w = i < MAX_WORKERS ? ws[i] : NULL;
        if (!w) {
            fn(args[i]);
            continue;
        }
        pthread_mutex_lock(&w->mu);
        while (w->state != W_DONE) {
            pthread_cond_wait(&w->cv, &w->mu);
        }
        w->state = W_IDLE;
        pthread_mutex_unlock(&w->mu);
        worker_give(w);
    }
}

#else

void
workers_run(void (*fn)(void *), void *const *args, int n)
{
    for (int i = 0; i < n; i++) {
        fn(args[i]);
    }
}

#endif
