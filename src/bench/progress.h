/* clreduce-bench's progress line on stderr: "[k/N] what, T s", one line
 * rewritten in place (\r) as the rows run.  Shown when stderr is a
 * terminal, or with --progress; never on stdout nor in a result file. */
#ifndef CLR_BENCH_PROGRESS_H
#define CLR_BENCH_PROGRESS_H

#include <stddef.h>

/* Start counting `total` steps; forced: --progress (shown even when
 * stderr is no terminal).  Shown otherwise only when stderr is one. */
void progress_start(size_t total, int forced);
/* The next step begins: redraw the line with its label (printf format). */
void progress_step(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Take the line off the terminal before anything else is printed (a
 * table row on stdout, a message on stderr); the next step redraws it. */
void progress_clear(void);
/* The last step is done: "[N/N] done, T s" ends the line. */
void progress_end(void);

#endif
