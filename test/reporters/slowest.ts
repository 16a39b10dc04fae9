import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** How many files the summary names: WSMIRROR_TEST_SLOWEST, default 15. */
const SHOWN = Number(process.env.WSMIRROR_TEST_SLOWEST ?? 15);

/**
 * Prints the slowest test files of a run with their wall times, so a run's long poles are named in
 * CI's output without digging through the per-file lines. Only for runs of more files than it
 * shows: a single file's run already says its time.
 */
export default class SlowestFiles implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    if (modules.length <= SHOWN) return;
    const timed = modules
      .map((m) => ({ file: relative(process.cwd(), m.moduleId), ms: m.diagnostic().duration, tests: [...m.children.allTests()].length }))
      .sort((a, b) => b.ms - a.ms);
    const total = timed.reduce((sum, t) => sum + t.ms, 0);
    const lines = timed
      .slice(0, SHOWN)
      .map((t) => `  ${(t.ms / 1000).toFixed(1).padStart(7)} s  ${String(t.tests).padStart(4)} tests  ${t.file}`);
    // Written straight out: vitest's own output is done by now.
    process.stdout.write(
      `\nThe ${SHOWN} slowest of ${modules.length} test files (file wall time; ${(total / 1000).toFixed(0)} s summed over all files):\n${lines.join('\n')}\n`,
    );
  }
}
