import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/**
 * The package version, read at runtime so it never drifts from package.json. The module runs from
 * `src/api/` under vitest and from `dist/src/api/` after tsc, so the depth differs: walk up to the
 * nearest package.json named `wsmirror` instead of hard-coding `../..`.
 */
export function packageVersion(startUrl: string = import.meta.url): string {
  if (cached !== undefined && startUrl === import.meta.url) return cached;
  let dir = dirname(fileURLToPath(startUrl));
  let version = '0.0.0';
  for (;;) {
    const found = readPackage(join(dir, 'package.json'));
    if (found !== undefined) {
      version = found;
      break;
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  if (startUrl === import.meta.url) cached = version;
  return version;
}

function readPackage(file: string): string | undefined {
  try {
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
    // A package.json of another name (e.g. a nested fixture) is not ours: keep walking.
    if (pkg.name === 'wsmirror' && typeof pkg.version === 'string') return pkg.version;
  } catch {
    // Missing or unreadable: keep walking.
  }
  return undefined;
}

/** `wsmirror/<version>`, the User-Agent of docs/design.md §4.8. */
export function defaultUserAgent(): string {
  return `wsmirror/${packageVersion()}`;
}
