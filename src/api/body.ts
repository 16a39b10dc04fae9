/**
 * Bounded reading of a response body (docs/sync.md, "Hostile upstream"): a body is never buffered
 * beyond the limit, so a server offering hundreds of megabytes costs at most `limit` bytes.
 */
export type BodyStream = AsyncIterable<Buffer | string> & { destroy?(err?: Error): unknown };

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
 */
export async function readBounded(
  body: BodyStream,
  limit: number,
  announced: number | null,
  refuse: boolean,
  budget?: BodyBudget,
): Promise<BoundedBody> {
  if (refuse && announced !== null && announced > limit) {
    body.destroy?.();
    return { text: '', bytes: 0, tooLarge: true };
  }
  const reader = budget?.join();
  try {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let kept = 0;
    let cut = false;
    for await (const chunk of body) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      bytes += buf.length;
      if (kept + buf.length > limit) {
        if (refuse) {
          body.destroy?.();
          return { text: '', bytes, tooLarge: true };
        }
        chunks.push(buf.subarray(0, limit - kept));
        kept = limit;
        cut = true;
        break; // leaving the loop destroys the stream
      }
      // Not reading on while the budget is spent is backpressure: the socket fills and the
      // server waits.
      if (reader) await reader.take(buf.length);
      chunks.push(buf);
      kept += buf.length;
    }
    const text = Buffer.concat(chunks, kept).toString('utf8');
    return { text: cut ? `${text}…(truncated)` : text, bytes, tooLarge: false };
  } finally {
    reader?.leave();
  }
}

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
      take: async (n) => {
        while (this.readers[0] !== reader && this.used + n > this.limit) {
          await new Promise<void>((resolve) => this.waiters.push(resolve));
        }
        this.used += n;
        reader.held += n;
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
  take(n: number): Promise<void>;
  leave(): void;
}
