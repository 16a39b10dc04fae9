import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BodyBudget, readBounded } from './body.js';
import { clipDepth, clipText, quote, tooDeepAt } from './json-bounds.js';

/** Nesting built iteratively: `{"a":{"a":...}}` `depth` levels deep. */
function nested(depth: number): unknown {
  const root: Record<string, unknown> = {};
  let cur = root;
  for (let i = 1; i < depth; i++) {
    const next: Record<string, unknown> = {};
    cur.a = next;
    cur = next;
  }
  return root;
}

describe('JSON bounds', () => {
  it('finds nesting beyond the limit at any depth without recursion', () => {
    expect(tooDeepAt(nested(10), 256)).toBeNull();
    expect(tooDeepAt(nested(300), 256)).toMatch(/^a(\.a)+$/);
    expect(tooDeepAt(nested(200_000), 256)).not.toBeNull();
  });

  it('clips depth with a marker and keeps everything above it', () => {
    const clipped = clipDepth({ id: 't_1', fields: nested(100_000) }, 5) as Record<string, unknown>;
    expect(clipped.id).toBe('t_1');
    const text = JSON.stringify(clipped);
    expect(text).toContain('[cut: nested deeper than 5 levels]');
    expect(tooDeepAt(clipped, 5)).toBeNull();
  });

  it('cuts reasons and quoted values, saying how much was left out', () => {
    expect(clipText('x'.repeat(5000), 100)).toMatch(/^x{100}…\(4900 more characters\)$/);
    expect(quote('y'.repeat(1_000_000)).length).toBeLessThan(200);
    expect(clipText('short')).toBe('short');
  });
});

describe('readBounded', () => {
  const chunks = (n: number, size: number) =>
    Readable.from(
      (function* () {
        for (let i = 0; i < n; i++) yield Buffer.alloc(size, 'a');
      })(),
    );

  it('refuses a body past the limit after reading at most one chunk beyond it', async () => {
    const r = await readBounded(chunks(1000, 1024), 10 * 1024, null, true);
    expect(r.tooLarge).toBe(true);
    expect(r.bytes).toBeLessThanOrEqual(11 * 1024);
  });

  it('refuses an announced Content-Length past the limit without reading', async () => {
    const r = await readBounded(chunks(1000, 1024), 10 * 1024, 1_000_000, true);
    expect(r).toEqual({ text: '', bytes: 0, tooLarge: true });
  });

  it('cuts an error body at the limit and marks it', async () => {
    const r = await readBounded(chunks(1000, 1024), 4096, null, false);
    expect(r.tooLarge).toBe(false);
    expect(r.text).toBe(`${'a'.repeat(4096)}…(truncated)`);
  });

  it('fails at once, never hangs, on a body that failed or closed before it was read', async () => {
    const failed = chunks(3, 10);
    failed.on('error', () => undefined); // emitted before readBounded listens
    failed.destroy(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }));
    await new Promise((r) => setImmediate(r)); // its 'error' and 'close' have been emitted
    await expect(readBounded(failed, 100, null, true)).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
    const closed = chunks(3, 10);
    closed.destroy();
    await new Promise((r) => setImmediate(r));
    await expect(readBounded(closed, 100, null, true)).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
  });

  it('fails on a body cut mid-way, and a late error on an abandoned body is not thrown', async () => {
    const cut = new Readable({ read() {} });
    const reading = readBounded(cut, 100, null, true);
    cut.push(Buffer.from('{"a":'));
    cut.destroy(Object.assign(new Error('terminated'), { code: 'UND_ERR_SOCKET' }));
    await expect(reading).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
    const late = new Readable({ read() {} });
    const refused = readBounded(late, 4, null, true);
    late.push(Buffer.from('0123456789'));
    await expect(refused).resolves.toMatchObject({ tooLarge: true });
    late.emit('error', new Error('after the answer')); // would be an uncaught error without a listener
  });

  it('reads a body within the limit whole', async () => {
    const r = await readBounded(chunks(3, 10), 100, 30, true);
    expect(r).toEqual({ text: 'a'.repeat(30), bytes: 30, tooLarge: false });
  });
});

describe('BodyBudget', () => {
  it('holds a younger reader while the budget is spent; the oldest always goes on', async () => {
    const budget = new BodyBudget(100);
    const first = budget.join();
    const second = budget.join();
    await first.take(80);
    await first.take(80); // the oldest exceeds the budget rather than wait
    let secondGot = false;
    const pending = second.take(50).then(() => (secondGot = true));
    await new Promise((r) => setImmediate(r));
    expect(secondGot).toBe(false);
    first.leave();
    await pending;
    expect(secondGot).toBe(true);
    second.leave();
  });
});
