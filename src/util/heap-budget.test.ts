import { constants, PerformanceObserver } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { createHeapBudget } from './heap-budget.js';

describe('heap budget', () => {
  it('asks for a collection only above the budget, at most once per interval', () => {
    let used = 10;
    let t = 0;
    let collections = 0;
    const budget = createHeapBudget({
      budgetBytes: 100,
      intervalMs: 250,
      heapUsed: () => used,
      collect: () => collections++,
      now: () => t,
    });
    expect(budget.check()).toBe(false);
    used = 150;
    t = 100;
    expect(budget.check()).toBe(false); // within the interval of the last look
    t = 260;
    expect(budget.check()).toBe(true);
    t = 300;
    expect(budget.check()).toBe(false);
    t = 520;
    expect(budget.check()).toBe(true);
    used = 50;
    t = 800;
    expect(budget.check()).toBe(false);
    expect(collections).toBe(2);
  });

  it('does nothing when no collector can be reached', () => {
    const budget = createHeapBudget({ budgetBytes: 0, heapUsed: () => 1, collect: null });
    expect(budget.check()).toBe(false);
  });

  it("reaches V8's own collector: a full collection follows the request", async () => {
    const majors: number[] = [];
    const observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries())
        if (((e as { detail?: unknown }).detail as { kind?: number } | undefined)?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)
          majors.push(e.startTime);
    });
    observer.observe({ entryTypes: ['gc'] });
    try {
      const asked = performance.now();
      expect(createHeapBudget({ budgetBytes: 0, intervalMs: 0 }).check()).toBe(true);
      // Incremental: it finishes within a few turns of the event loop; the test's timeout bounds the wait.
      while (!majors.some((t) => t >= asked)) await new Promise((resolve) => setTimeout(resolve, 5));
    } finally {
      observer.disconnect();
    }
  });
});
