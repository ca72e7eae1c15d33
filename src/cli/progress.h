/* A progress line on stderr for long runs: the phase and the seconds
 * since the run began, redrawn in place by a thread of its own, so a run
 * that generates, reads, times or verifies for many seconds is never
 * silent.  Shown when stderr is a terminal (after the run's first 2 s) or
 * with --progress (at once, wherever stderr goes); never on stdout, so
 * --json output is untouched.  Messages (cli_error, -v's log lines)
 * clear the line first. */
#ifndef CLR_CLI_PROGRESS_H
#define CLR_CLI_PROGRESS_H

#include "cli.h"

/* Start the progress line: asked (--progress) shows it at once, else only
 * a terminal shows it, after 2 s.  0, or -1 when no thread could be made
 * (the run goes on without a progress line). */
int cli_progress_start(int asked);
/* The phase now ("generating 100000000 float values", "timed run 3 of
 * 10", "verifying against the CPU"), printf-style. */
void cli_progress_phase(const char *fmt, ...) CLI_PRINTF(1, 2);
/* Clear the line (before a message); it is redrawn on the next tick. */
void cli_progress_clear(void);
/* Stop the thread and clear the line for good. */
void cli_progress_stop(void);

#endif
