/* A progress line on stderr for long runs: the phase, how far it is, and
 * the seconds since the run began, redrawn in place by a thread of its
 * own, so a run that generates, reads, times or verifies for many seconds
 * is never silent.  Shown when stderr is a terminal (after the run's first
 * 2 s) or with --progress (at once, wherever stderr goes); never on
 * stdout, so --json output is untouched.  Messages (cli_error, -v's log
 * lines) clear the line first.
 *
 * How far: while the line is on, src/check's loops (the generated data,
 * the CPU references, the checks of every element or segment) report to
 * the phase's counter (src/check/progress_counter.h) and the reads of
 * --input files (fileio.c's cli_read_progress) their bytes; the counter
 * restarts with each phase. */
#ifndef CLR_CLI_PROGRESS_H
#define CLR_CLI_PROGRESS_H

#include "cli.h"
#include "progress_counter.h"

#include <stddef.h>
#include <stdint.h>

/* Start the progress line: asked (--progress) shows it at once, else only
 * a terminal shows it, after 2 s.  0, or -1 when no thread could be made
 * (the run goes on without a progress line). */
int cli_progress_start(int asked);
/* The phase now ("generating 100000000 float values", "timed run 3 of
 * 10", "verifying against the CPU"), printf-style. */
void cli_progress_phase(const char *fmt, ...) CLI_PRINTF(1, 2);
/* The same, with the phase's work (elements) planned: the line shows its
 * fraction from the first draw (the calls of src/check the phase makes
 * plan nothing more). */
void cli_progress_phase_work(uint64_t work, const char *fmt, ...)
    CLI_PRINTF(2, 3);
/* Clear the line (before a message); it is redrawn on the next tick. */
void cli_progress_clear(void);
/* Stop the thread and clear the line for good. */
void cli_progress_stop(void);

/* The line (without its \r), into buf: the phase, then how far it is
 * when known, then the seconds:
 *   "generating 1500000000 float values: 43%, 12 s"  (c's fraction)
 *   "reading 'x.f32': 43% of 5.6 GiB, 12 s"  (bytes: done of total)
 *   "reading '/dev/stdin': 1.2 GiB so far, 12 s"  (bytes, total 0)
 *   "sum of float: timed run 3 of 10, 12 s"  (nothing planned)
 * bytes: c counts bytes read (done of total, 0 unknown), not work. */
void cli_progress_format(char *buf, size_t size, const char *phase,
                         const clr_progress *c, int bytes, double seconds);

#endif
