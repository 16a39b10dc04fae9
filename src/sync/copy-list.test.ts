import { describe, expect, it } from 'vitest';
import { CursorRejectedError, type Page } from '../api/index.js';
import { silentLogger } from '../log/index.js';
import { copyList, type LoadedPage } from './copy-list.js';

/** A list of `n` pages of one item each; page i's cursor is `c<i>`. */
function pages(n: number): Map<string | undefined, Page<{ id: string }>> {
  const out = new Map<string | undefined, Page<{ id: string }>>();
  for (let i = 0; i < n; i++) {
    out.set(i === 0 ? undefined : `c${i}`, { items: [{ id: `r${i}` }], invalid: [], nextCursor: i + 1 < n ? `c${i + 1}` : null });
  }
  return out;
}

interface Applied {
  ids: string[];
  cursor: string | null;
}

function recorder() {
  const applied: Applied[] = [];
  let notify: (() => void) | null = null;
  return {
    applied,
    apply: (group: readonly LoadedPage<{ id: string }, null>[], cursor: string | null) => {
      applied.push({ ids: group.flatMap((g) => g.page.items.map((i) => i.id)), cursor });
      notify?.();
      return Promise.resolve();
    },
    /** Resolves once `count` groups have been applied. */
    until: (count: number) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (applied.length >= count) resolve();
        };
        notify = check;
        check();
      }),
  };
}

const ctx = (signal = new AbortController().signal) => ({ stopSignal: signal, logger: silentLogger() });
const load = () => Promise.resolve(null);

describe('copyList page groups', () => {
  it('commits up to maxPages pages per group, each group with the cursor after its last page', async () => {
    const list = pages(7);
    const r = recorder();
    const done = await copyList(ctx(), null, (c) => Promise.resolve(list.get(c)!), load, r.apply, { maxPages: 3, maxDelayMs: 60_000 });
    expect(done).toBe(true);
    expect(r.applied).toEqual([
      { ids: ['r0', 'r1', 'r2'], cursor: 'c3' },
      { ids: ['r3', 'r4', 'r5'], cursor: 'c6' },
      { ids: ['r6'], cursor: null },
    ]);
  });

  it('resumes from a saved cursor', async () => {
    const list = pages(4);
    const r = recorder();
    await copyList(ctx(), 'c2', (c) => Promise.resolve(list.get(c)!), load, r.apply, { maxPages: 10 });
    expect(r.applied).toEqual([{ ids: ['r2', 'r3'], cursor: null }]);
  });

  it('commits what it holds when the next page is slower than maxDelayMs', async () => {
    const list = pages(3);
    const r = recorder();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const fetchPage = async (c: string | undefined) => {
      // The second page is held until the first has committed on its own: only the time bound
      // can close that group, so the test fails (times out) without it.
      if (c === 'c1') await held;
      return list.get(c)!;
    };
    const run = copyList(ctx(), null, fetchPage, load, r.apply, { maxPages: 10, maxDelayMs: 20 });
    await r.until(1);
    expect(r.applied[0]).toEqual({ ids: ['r0'], cursor: 'c1' });
    release();
    await run;
    expect(r.applied.slice(1)).toEqual([{ ids: ['r1', 'r2'], cursor: null }]);
  });

  it('commits the pages it read before throwing a failure', async () => {
    const list = pages(5);
    const r = recorder();
    const boom = new Error('upstream broke');
    const fetchPage = (c: string | undefined) => (c === 'c2' ? Promise.reject(boom) : Promise.resolve(list.get(c)!));
    await expect(copyList(ctx(), null, fetchPage, load, r.apply, { maxPages: 10, maxDelayMs: 60_000 })).rejects.toBe(boom);
    expect(r.applied).toEqual([{ ids: ['r0', 'r1'], cursor: 'c2' }]);
  });

  it('on a stop, commits what it holds, drops the prefetched page and says the list is not done', async () => {
    const list = pages(5);
    const r = recorder();
    const stop = new AbortController();
    const fetchPage = (c: string | undefined) => {
      if (c === 'c1') stop.abort();
      return Promise.resolve(list.get(c)!);
    };
    const done = await copyList(ctx(stop.signal), null, fetchPage, load, r.apply, { maxPages: 10, maxDelayMs: 60_000 });
    expect(done).toBe(false);
    // The stop came while the second page was being fetched: it is awaited, not applied.
    expect(r.applied).toEqual([{ ids: ['r0'], cursor: 'c1' }]);
  });

  it('restarts the list once when the saved cursor is rejected', async () => {
    const list = pages(2);
    const r = recorder();
    const rejected = new CursorRejectedError({ status: 400, method: 'GET', path: '/api/v1/tickets?cursor=stale' });
    const fetchPage = (c: string | undefined) => (c === 'stale' ? Promise.reject(rejected) : Promise.resolve(list.get(c)!));
    await copyList(ctx(), 'stale', fetchPage, load, r.apply, { maxPages: 10 });
    expect(r.applied).toEqual([{ ids: ['r0', 'r1'], cursor: null }]);
  });
});
