// Ends a vitest run with one plain line, "js: N passed, M failed" (plus
// ", K skipped" when some were), the closing line scripts/test.sh and CI tally.
// The label is an option: ['./tests/js/summary-reporter.ts', { label: 'browser' }].
import type { Reporter } from 'vitest/reporters';

type Task = { type: string; mode?: string; result?: { state?: string }; tasks?: Task[] };

function count(tasks: Task[], totals: { passed: number; failed: number; skipped: number }): void {
  for (const t of tasks) {
    if (t.tasks) count(t.tasks, totals);
    if (t.type !== 'test') continue;
    const state = t.result?.state;
    if (state === 'pass') totals.passed++;
    else if (state === 'fail') totals.failed++;
    else totals.skipped++;
  }
}

export default class SummaryReporter implements Reporter {
  readonly #label: string;

  constructor(options: { label?: string } = {}) {
    this.#label = options.label ?? 'js';
  }

  onFinished(files: Task[] = [], errors: unknown[] = []): void {
    const totals = { passed: 0, failed: 0, skipped: 0 };
    count(files, totals);
    // A file that failed to load (or an unhandled error) counts as a failure.
    for (const f of files) if (f.result?.state === 'fail' && !(f.tasks ?? []).some((t) => t.result?.state === 'fail')) totals.failed++;
    totals.failed += errors.length;
    const skipped = totals.skipped > 0 ? `, ${totals.skipped} skipped` : '';
    process.stdout.write(`${this.#label}: ${totals.passed} passed, ${totals.failed} failed${skipped}\n`);
  }
}
