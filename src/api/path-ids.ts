/**
 * Record ids that cannot go into a request path unchanged (docs/sync.md, "Hostile upstream"). The
 * client URL-encodes ids, but `.` and `..` stay dot segments, and a proxy or server that decodes
 * `%2F`, `%5C` or a second layer of percent-encoding before it routes turns an id into another
 * path: the answer is then another endpoint's, and the record silently absent. Such a ticket or
 * deal is quarantined with this reason, never requested.
 */

// eslint-disable-next-line no-control-regex -- control characters are what some proxies strip from paths
const SEPARATOR_OR_CONTROL = /[/\\\u0000-\u001f\u007f]/;

/** Why `id` is not a safe path segment, or null when it is. */
export function unsafePathSegment(id: string): string | null {
  const own = unsafeText(id);
  if (own !== null) return own;
  if (!id.includes('%')) return null;
  // A path decoded twice on its way (a proxy, then the server) sees this text instead.
  let decoded: string;
  try {
    decoded = decodeURIComponent(id);
  } catch {
    return null; // not percent-encoding at all: it is sent encoded, as any other character
  }
  const twice = unsafeText(decoded);
  return twice === null ? null : `once percent-decoded, ${twice}`;
}

// Native on Node 20 (not yet in the ES2023 lib types).
const wellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

function unsafeText(id: string): string | null {
  if (id === '') return 'it is empty';
  // encodeURIComponent throws on a lone surrogate: there is no URL for it at all.
  if (!wellFormed(id)) return 'it holds a lone UTF-16 surrogate, which no URL can carry';
  if (id === '.' || id === '..') return `it is the dot segment "${id}", which a URL resolves away`;
  if (SEPARATOR_OR_CONTROL.test(id)) return 'it holds a path separator (/ or \\) or a control character, which proxies may decode or strip';
  return null;
}
