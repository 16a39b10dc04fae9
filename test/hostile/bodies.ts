/** Bodies of any size, generated as streams: the test process never holds one whole. */
import { Readable } from 'node:stream';

const CHUNK = 64 * 1024;

/** `prefix` + 'a' repeated to make `bytes` in all + `suffix`. */
export function filler(prefix: string, bytes: number, suffix: string): Readable {
  const pad = Math.max(0, bytes - prefix.length - suffix.length);
  const block = Buffer.alloc(CHUNK, 'a');
  return Readable.from(
    (function* () {
      yield Buffer.from(prefix);
      for (let left = pad; left > 0; left -= CHUNK) yield left >= CHUNK ? block : block.subarray(0, left);
      yield Buffer.from(suffix);
    })(),
  );
}

/** `bytes` bytes of JSON-ish text with no end in sight (the client must stop reading it). */
export function repeatedBytes(bytes: number): Readable {
  return filler('{"ticket":{"pad":"', bytes, '"}}');
}

/** before + `[` * depth + `]` * depth + after, in chunks. */
export function* deepJsonStream(before: string, depth: number, after: string): Generator<string> {
  yield before;
  for (let left = depth; left > 0; left -= 4096) yield '['.repeat(Math.min(4096, left));
  for (let left = depth; left > 0; left -= 4096) yield ']'.repeat(Math.min(4096, left));
  yield after;
}
