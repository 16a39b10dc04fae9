import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO } from '../helpers/cli.js';

export const DEPLOY = join(REPO, 'deploy');
export const KUBERNETES = join(DEPLOY, 'kubernetes');

/** Loosely typed YAML content: each expect() is the check of its shape. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed manifests, checked field by field
export type Doc = any;

/** Every YAML document of a file; a YAML error (a bad indent, a duplicate key) fails with the file's name. */
export function readYaml(path: string): Doc[] {
  const docs = parseAllDocuments(readFileSync(path, 'utf8'), { uniqueKeys: true, merge: true });
  const list = Array.isArray(docs) ? docs : [docs];
  for (const d of list) if (d.errors.length > 0) throw new Error(`${path}: ${d.errors.map((e) => e.message).join('; ')}`);
  return list.map((d) => d.toJS({ maxAliasCount: 100 })).filter((d) => d !== null);
}

export function readJson(path: string): Doc {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** The manifest files of deploy/kubernetes, kustomization.yaml apart. */
export function manifestFiles(): string[] {
  return readdirSync(KUBERNETES)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .sort();
}

/** Every string inside a parsed document, with where it is, for scans such as "no address but loopback". */
export function strings(value: unknown, at = ''): { at: string; value: string }[] {
  if (typeof value === 'string') return [{ at, value }];
  if (Array.isArray(value)) return value.flatMap((v, i) => strings(v, `${at}[${i}]`));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => strings(v, at ? `${at}.${k}` : k));
  return [];
}

/** IPv4 addresses and host names in URLs or `--host` values that are not loopback. */
export function nonLoopback(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/\b(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\b/g)) if (m[1] !== '127') found.push(m[0]);
  for (const m of text.matchAll(/\b[a-z][a-z0-9+.-]*:\/\/(?:[^@/\s]*@)?([^:/\s?#]+)/gi)) {
    const host = m[1] as string;
    if (!/^127\.\d+\.\d+\.\d+$/.test(host) && host !== 'localhost' && host !== '[::1]') found.push(m[0]);
  }
  return found;
}
