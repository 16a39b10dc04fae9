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
export async function readBounded(body: BodyStream, limit: number, announced: number | null, refuse: boolean): Promise<BoundedBody> {
  if (refuse && announced !== null && announced > limit) {
    body.destroy?.();
    return { text: '', bytes: 0, tooLarge: true };
  }
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
    chunks.push(buf);
    kept += buf.length;
  }
  const text = Buffer.concat(chunks, kept).toString('utf8');
  return { text: cut ? `${text}…(truncated)` : text, bytes, tooLarge: false };
}
