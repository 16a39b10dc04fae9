import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { WsmirrorError } from '../util/errors.js';
import { ApiError, AuthRejectedError, InvalidRecordError, RateLimitedError, UpstreamUnavailableError } from './errors.js';
import { redactJson, REDACTED, SecretRedactor, sanitizeCause } from '../util/redact.js';
import { defaultUserAgent, packageVersion } from '../util/version.js';
import { readFileSync } from 'node:fs';

const KEY = 'sk_test_abcdefghijklmnop';
const redactor = new SecretRedactor(KEY);

/** An error shaped like undici's: the request, headers included, hangs off the error object. */
function undiciLikeError(): Error {
  const err = new Error(`connect failed for Bearer ${KEY}`) as Error & Record<string, unknown>;
  err.code = 'ECONNRESET';
  err.request = { headers: { authorization: `Bearer ${KEY}` } };
  err.cause = Object.assign(new Error(`inner ${KEY}`), { headers: [`authorization: Bearer ${KEY}`] });
  return err;
}

function allForms(err: unknown): string[] {
  return [JSON.stringify(err), inspect(err, { depth: 20, showHidden: true }), String(err), (err as Error).stack ?? ''];
}

describe('redaction', () => {
  it('hides the key and any bearer token in text and JSON', () => {
    expect(redactor.redact(`x ${KEY} y`)).toBe(`x ${REDACTED} y`);
    expect(redactor.redact('Authorization: Bearer other-token')).toBe(`Authorization: Bearer ${REDACTED}`);
    expect(redactJson({ a: [KEY, { [KEY]: 1 }], n: 3 }, redactor)).toEqual({ a: [REDACTED, { [REDACTED]: 1 }], n: 3 });
  });

  it('sanitizeCause keeps name, code and message but drops the request objects', () => {
    const clean = sanitizeCause(undiciLikeError(), redactor);
    expect(clean.message).toBe(`connect failed for Bearer ${REDACTED}`);
    expect((clean as Error & { code?: string }).code).toBe('ECONNRESET');
    expect((clean as unknown as Record<string, unknown>).request).toBeUndefined();
    for (const form of allForms(clean)) expect(form).not.toContain(KEY);
  });
});

describe('ApiError serialisation', () => {
  const details = {
    status: 503,
    method: 'GET',
    path: '/api/v1/deals/d_1',
    attempts: 6,
    body: redactJson({ echo: KEY }, redactor),
    cause: sanitizeCause(undiciLikeError(), redactor),
  };
  const errors = [
    new UpstreamUnavailableError('it answered 503', details),
    new RateLimitedError({ ...details, status: 429 }),
    new AuthRejectedError({ ...details, status: 401 }),
    new InvalidRecordError({ entityType: 'deal', id: 'd_1', reason: 'amount: bad', raw: { id: 'd_1' } }, details),
  ];

  it.each(errors.map((e) => [e.code, e]))('%s never shows the key in JSON, inspect, String or stack', (_code, err) => {
    for (const form of allForms(err)) expect(form).not.toContain(KEY);
  });

  it('has a stable code, the request, and a message that says what to do', () => {
    const [unavailable, limited, auth, invalid] = errors;
    expect(unavailable).toBeInstanceOf(ApiError);
    expect(unavailable).toBeInstanceOf(WsmirrorError);
    expect(JSON.parse(JSON.stringify(unavailable))).toMatchObject({
      name: 'UpstreamUnavailableError',
      code: 'UPSTREAM_UNAVAILABLE',
      status: 503,
      method: 'GET',
      path: '/api/v1/deals/d_1',
      attempts: 6,
      body: { echo: REDACTED },
      cause: { name: 'Error', code: 'ECONNRESET' },
    });
    expect(unavailable!.message).toMatch(/after 6 attempts\. Check baseUrl/);
    expect(limited!.message).toMatch(/Lower maxRequestsPerSecond/);
    expect(auth!.message).toMatch(/Check WSMIRROR_API_KEY/);
    expect(JSON.parse(JSON.stringify(invalid))).toMatchObject({
      code: 'INVALID_RECORD',
      entityType: 'deal',
      entityId: 'd_1',
      reason: 'amount: bad',
    });
  });
});

describe('User-Agent', () => {
  it('carries the version of the nearest wsmirror package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(packageVersion()).toBe(pkg.version);
    expect(defaultUserAgent()).toBe(`wsmirror/${pkg.version}`);
    // From a deeper directory (as under dist/src/api) the walk finds the same file.
    expect(packageVersion(new URL('../../dist/src/api/client.js', import.meta.url).href)).toBe(pkg.version);
  });
});
