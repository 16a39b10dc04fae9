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

  it('reads up to aheadPages pages while a group commits, and no further', async () => {
    const list = pages(8);
    const fetched: (string | undefined)[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let fetchedWhileHeld: (string | undefined)[] = [];
    let heldFirst = true;
    const apply = async (group: readonly LoadedPage<{ id: string }, null>[]) => {
      if (heldFirst) {
        heldFirst = false;
        // Let every read that can start while this commit waits start and finish.
        for (let i = 0; i < 20; i++) await Promise.resolve();
        fetchedWhileHeld = [...fetched];
        release();
        await held;
      }
      return void group;
    };
    const fetchPage = (c: string | undefined) => {
      fetched.push(c);
      return Promise.resolve(list.get(c)!);
    };
    await copyList(ctx(), null, fetchPage, load, apply, { maxPages: 1, maxDelayMs: 60_000, aheadPages: 3 });
    // Page 0 is being committed; pages 1 to 3 are read ahead, page 4 waits for room.
    expect(fetchedWhileHeld).toEqual([undefined, 'c1', 'c2', 'c3']);
    expect(fetched).toEqual([undefined, 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7']);
  });

  it('on a stop, awaits every page read ahead and applies none of them', async () => {
    const list = pages(8);
    const applied: string[][] = [];
    const stop = new AbortController();
    let running = 0;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let stopped!: () => void;
    const stopSeen = new Promise<void>((resolve) => (stopped = resolve));
    const fetchPage = async (c: string | undefined) => {
      running++;
      if (c === 'c3') {
        // Pages 1 and 2 are read ahead while page 0 commits; the stop comes as page 3 is read.
        stop.abort();
        stopped();
        await held;
      }
      running--;
      return list.get(c)!;
    };
    const apply = async (group: readonly LoadedPage<{ id: string }, null>[]) => {
      applied.push(group.flatMap((g) => g.page.items.map((i) => i.id)));
      if (applied.length === 1) await stopSeen;
    };
    const run = copyList(ctx(stop.signal), null, fetchPage, load, apply, { maxPages: 1, maxDelayMs: 60_000, aheadPages: 3 });
    await stopSeen;
    let finished = false;
    void run.then(() => (finished = true));
    for (let i = 0; i < 20; i++) await Promise.resolve();
    // The read of c3 is still running: the list is not over until it is awaited.
    expect(finished).toBe(false);
    release();
    expect(await run).toBe(false);
    expect(running).toBe(0);
    expect(applied).toEqual([['r0']]);
  });
});
