import { createHash, timingSafeEqual } from 'node:crypto';

/** Paths open without a token: an orchestrator's liveness probe carries none. */
export const OPEN_PATHS: ReadonlySet<string> = new Set(['/healthz']);

/**
 * The bearer check of `http.authToken` (docs/operations.md, "Access"). Both sides are hashed
 * first, so the comparison is over equal-length digests and takes the same time whatever the
 * length or the content of the token a client sends.
 */
export function bearerGate(token: string | undefined): (path: string, authorization: string | undefined) => boolean {
  if (token === undefined) return () => true;
  const expected = digest(token);
  return (path, authorization) => {
    if (OPEN_PATHS.has(path)) return true;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    // Compared even when absent, so a request without a token costs what a wrong one does.
    const given = digest(match?.[1] ?? '');
    return timingSafeEqual(given, expected) && match !== null;
  };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
