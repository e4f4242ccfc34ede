/*
 * The engine of an encode (encoder only): the one the settings name, or
 * with "auto" the first of the registry's preferences that starts.
 *
 * An engine that is slow to start (mmp_engine_ops.slow_start: opencl loads
 * the OpenCL platforms, creates a context and loads its kernels, a few
 * tenths of a second) is created on a thread of its own while a CPU engine
 * (omp, else seq) searches the first steps: the head start. The encoder
 * asks at every step boundary (mmp_engines_step) whether the slow engine
 * is ready, and moves to it there. Every engine writes the same bytes, so
 * where the move falls cannot change the file. mmp_settings.head_start
 * turns this off (the engine searches every step, as tests of an engine
 * need) or fixes the number of steps (tests of the move itself).
 */
#ifndef MMP_MMP_ENGINE_START_H
#define MMP_MMP_ENGINE_START_H

#include <pthread.h>
#include <stdatomic.h>

#include "common/log.h"
#include "kernels/engine.h"
#include "mmp/mmp.h"

typedef struct mmp_engines {
    /* The engine that searches now. */
    const mmp_engine_ops *eng;
    void *es;
    /* The slow engine, while it starts on `thread` (starting), and what
     * that gave: ops and state, or err and why. */
    int starting;
    pthread_t thread;
    _Atomic int ready;
    const mmp_engine_ops *next;
    void *next_es;
    int next_err;
    char why[512];
    /* For the starting thread. */
    int named; /* the settings name the slow engine (its failure is an error) */
    const char *name;
    const mmp_engine_ops *cpu; /* with "auto": the head start's engine */
    int quick_threads;         /* the threads it was given */
    mmp_engine_config cfg;     /* the settings' (verbose and log for this file too) */
    /* head_start of the settings, the steps the head start's engine
     * searched before the slow one took over, and when the start began
     * (for -v). */
    int head_start;
    long head_steps;
    double t0;
    /* Released before the encode ends (mmp_engines_release): the thread
     * that destroys it, the state it destroys, and the concurrency the
     * engine had. */
    int releasing;
    pthread_t release_thread;
    void *released_es;
    int released_concurrency;
} mmp_engines;

/* Starts the settings' engine, or the CPU engine of a head start and the
 * slow engine behind it, for an encode that searches `blocks` blocks.
 * Returns 0, or an error code with a line in errbuf (nothing left to
 * stop). */
int mmp_engines_start(mmp_engines *r, const mmp_settings *st, const mmp_logger *log, long blocks,
                      char *errbuf, size_t errlen);

/* At the boundary after `steps` steps searched in all (every plane): 1 when
 * r->eng changed (the caller's search must be made again for it), 0 when
 * not, or an error code with a line in errbuf (the engine named failed to
 * start). */
int mmp_engines_step(mmp_engines *r, long steps, char *errbuf, size_t errlen);

/* After the last step: waits for a slow engine still starting (every step
 * was searched before it was ready), which is then not used. Returns 0, or
 * the error of an engine named that failed to start. */
int mmp_engines_finish(mmp_engines *r, char *errbuf, size_t errlen);

/*
 * After the encode's last search: an engine slow to start is slow to stop
 * too (opencl releases its context, tens of milliseconds), so it is
 * destroyed on a thread of its own while the encoder finishes the file
 * (the restoration filters); mmp_engines_stop waits for that thread. Not
 * with verbose settings, whose engine figures come in the order they
 * always did. r->eng stays for its name, mmp_engines_concurrency for its
 * threads.
 */
void mmp_engines_release(mmp_engines *r);

/* The concurrency of the engine of the moment (or of the one released). */
int mmp_engines_concurrency(const mmp_engines *r);

/* Stops every engine (after an error too). */
void mmp_engines_stop(mmp_engines *r);

/*
 * The engine that codes several tiles at once, each tile on its own
 * instance with a share of the threads: the engine the settings name when
 * it starts at once and runs threads (omp), with "auto" the best such
 * engine; NULL when the one named is slow to start (opencl) or runs one
 * thread (seq): it codes the tiles one after another. With "auto" tiles go
 * to the CPU even where a GPU is found: the GPU engine searches one tile's
 * wavefront at a time, and many small wavefronts one after another keep it
 * waiting (docs/tuning.md, "Tiles in parallel").
 */
const mmp_engine_ops *mmp_engines_tile_engine(const mmp_settings *st);

#endif
