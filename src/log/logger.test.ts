import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { SecretRedactor } from '../util/redact.js';
import { createLogger } from './logger.js';

function capture(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(String(chunk));
      cb();
    },
  });
  return { stream, text: () => chunks.join('') };
}

describe('createLogger', () => {
  it('scrubs the API key wherever it appears and redacts known key paths', () => {
    const out = capture();
    const log = createLogger({ redactor: new SecretRedactor('key-123456'), pretty: false, destination: out.stream });
    log.info({ apiKey: 'other-secret', url: 'http://x/?token=key-123456' }, 'failed with key-123456 in it');
    log.error({ err: new Error('Bearer key-123456 rejected') }, 'boom');
    const text = out.text();
    expect(text).not.toContain('key-123456');
    expect(text).not.toContain('other-secret');
    expect(text).toContain('[redacted]');
    expect(text.trim().split('\n')).toHaveLength(2);
    for (const line of text.trim().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
  });
});
