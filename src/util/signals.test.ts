import { describe, expect, it } from 'vitest';
import { linkSignals } from './signals.js';

/** Listeners a source holds, read through Node's internal symbol (test-only). */
function listenerCount(signal: AbortSignal): number {
  const sym = Object.getOwnPropertySymbols(signal).find((s) => s.toString() === 'Symbol(kEvents)');
  const events = sym ? (signal as unknown as Record<symbol, Map<string, { size?: number }>>)[sym] : undefined;
  return events?.get('abort')?.size ?? 0;
}

describe('linkSignals', () => {
  it('aborts with the reason of the first source that aborts', () => {
    const a = new AbortController();
    const b = new AbortController();
    const linked = linkSignals([a.signal, undefined, b.signal]);
    b.abort(new Error('b'));
    expect(linked.signal.aborted).toBe(true);
    expect((linked.signal.reason as Error).message).toBe('b');
    expect(linked.timedOut()).toBe(false);
  });

  it('starts aborted when a source already is', () => {
    const a = new AbortController();
    a.abort(new Error('early'));
    expect(linkSignals([a.signal], 10_000).signal.aborted).toBe(true);
  });

  it('times out and says so', async () => {
    const linked = linkSignals([new AbortController().signal], 5);
    await new Promise((resolve) => linked.signal.addEventListener('abort', resolve, { once: true }));
    expect(linked.timedOut()).toBe(true);
    expect((linked.signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('leaves nothing on a long-lived source once disposed, however many operations it served', () => {
    const lifetime = new AbortController();
    for (let i = 0; i < 10_000; i++) linkSignals([lifetime.signal], 60_000).dispose();
    expect(listenerCount(lifetime.signal)).toBe(0);
    const open = linkSignals([lifetime.signal], 60_000);
    expect(listenerCount(lifetime.signal)).toBe(1);
    open.dispose();
  });
});
