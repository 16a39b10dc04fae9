/**
 * Bounded reading of a response body (docs/sync.md, "Hostile upstream"): a body is never buffered
 * beyond the limit, so a server offering hundreds of megabytes costs at most `limit` bytes.
 */
import type { EventEmitter } from 'node:events';

/** A response body: undici's, or any Readable. Read by its events, not an async iterator (below). */
export type BodyStream = EventEmitter & { destroy?(err?: Error): unknown; pause?(): unknown; resume?(): unknown };

export interface BoundedBody {
  text: string;
  /** Bytes received (at most limit + one chunk). */
  bytes: number;
  /** The body was longer than the limit and `refuse` was set: text is empty. */
  tooLarge: boolean;
}

/**
 * Reads `body` up to `limit` bytes. With `refuse`, a longer body (or a Content-Length announcing
 * one) is abandoned and reported as tooLarge; without it, the text is cut at the limit and marked
 * "…(truncated)" (error bodies, kept for a log line only). Stopping early destroys the stream,
 * which closes that connection instead of draining it.
 *
 * By `data` events, as undici's own `body.json()` reads: an async iterator over the stream costs a
 * promise, a `readable` round and its end-of-stream watcher per body, about 1.5 s of CPU in an
 * L backfill's 50,000 reads (bench/README.md, "Thirteenth pass").
 */
export function readBounded(
  body: BodyStream,
  limit: number,
  announced: number | null,
  refuse: boolean,
  budget?: BodyBudget,
): Promise<BoundedBody> {
  if (refuse && announced !== null && announced > limit) {
    body.destroy?.();
    return Promise.resolve({ text: '', bytes: 0, tooLarge: true });
  }
  const reader = budget?.join();
  return new Promise<BoundedBody>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let kept = 0;
    let settled = false;
    const finish = (result: BoundedBody | null, err?: unknown): void => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      body.off('close', onClose);
      // An error the stream emits after the answer is decided (a destroy still under way) must
      // find a listener, or it would be thrown as uncaught.
      body.on('error', noop);
      reader?.leave();
      if (result === null) reject(err);
      else resolve(result);
    };
    const stop = (result: BoundedBody): void => {
      finish(result);
      body.destroy?.();
    };
    const onData = (chunk: Buffer | string): void => {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      bytes += buf.length;
      if (kept + buf.length > limit) {
        if (refuse) return stop({ text: '', bytes, tooLarge: true });
        chunks.push(buf.subarray(0, limit - kept));
        kept = limit;
        return stop({ text: `${Buffer.concat(chunks, kept).toString('utf8')}…(truncated)`, bytes, tooLarge: false });
      }
      chunks.push(buf);
      kept += buf.length;
      // Not reading on while the budget is spent is backpressure: the socket fills and the server waits.
      if (reader !== undefined && !reader.tryTake(buf.length)) {
        body.pause?.();
        reader.take(buf.length).then(() => {
          if (!settled) body.resume?.();
        }, noop);
      }
    };
    const onEnd = (): void => finish({ text: Buffer.concat(chunks, kept).toString('utf8'), bytes, tooLarge: false });
    const onError = (err: unknown): void => finish(null, err);
    // A stream closed before its end without an error (destroyed by someone else) is a cut body.
    const onClose = (): void =>
      finish(null, Object.assign(new Error('the response body closed before its end'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('error', onError);
    body.on('close', onClose);
    // A body that failed or closed before this call (undici destroys it in the same turn that
    // resolved the request when the connection drops) has emitted its events already: an
    // iterator would throw at once, so must this, never wait.
    const state = body as { errored?: unknown; destroyed?: boolean };
    if (state.errored) onError(state.errored);
    else if (state.destroyed) onClose();
  });
}

const noop = (): void => undefined;

/**
 * Bytes buffered by all bodies being read at once, client-wide. Without it, `concurrency` bodies
 * each growing to maxResponseBytes before being refused cost concurrency x maxResponseBytes.
 * A reader waits while the budget is spent, except the oldest one, which always goes on: it
 * finishes or is refused at its own limit, and frees its share, so the queue never deadlocks.
 * Peak: the budget plus one body's limit.
 */
export class BodyBudget {
  private used = 0;
  private readonly readers: BudgetReader[] = [];
  private waiters: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  join(): BudgetReader {
    const reader: BudgetReader = {
      held: 0,
      tryTake: (n) => {
        if (this.readers[0] !== reader && this.used + n > this.limit) return false;
        this.used += n;
        reader.held += n;
        return true;
      },
      take: async (n) => {
        while (!reader.tryTake(n)) {
          await new Promise<void>((resolve) => this.waiters.push(resolve));
          // A reader that left while waiting (its body failed) takes nothing and stops waiting.
          if (!this.readers.includes(reader)) return;
        }
      },
      leave: () => {
        const i = this.readers.indexOf(reader);
        if (i < 0) return;
        this.readers.splice(i, 1);
        this.used -= reader.held;
        reader.held = 0;
        const waiting = this.waiters;
        this.waiters = [];
        for (const wake of waiting) wake();
      },
    };
    this.readers.push(reader);
    return reader;
  }
}

export interface BudgetReader {
  held: number;
  /** Takes `n` at once when the budget allows (or this is the oldest reader); false otherwise, taking nothing. */
  tryTake(n: number): boolean;
  take(n: number): Promise<void>;
  leave(): void;
}
