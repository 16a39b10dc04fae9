import { ApiError, type Issues } from './errors.js';

/** Small readers for request bodies; each adds an issue naming the field instead of throwing. */

export type Body = Record<string, unknown>;

export function asBody(input: unknown): Body {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new ApiError(422, 'validation_failed', 'The request body must be a JSON object.', [
      { field: '(body)', message: 'must be a JSON object' },
    ]);
  return input as Body;
}

export function has(body: Body, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(body, key) && body[key] !== undefined;
}

export function text(
  body: Body,
  key: string,
  issues: Issues,
  opts: { required?: boolean; nullable?: boolean } = {},
): string | null | undefined {
  if (!has(body, key)) {
    if (opts.required) issues.add(key, 'is required');
    return undefined;
  }
  const v = body[key];
  if (v === null && opts.nullable) return null;
  if (typeof v !== 'string') {
    issues.add(key, opts.nullable ? 'must be a string or null' : 'must be a string');
    return undefined;
  }
  if (opts.required && v.trim() === '') {
    issues.add(key, 'must not be empty');
    return undefined;
  }
  return v;
}

export function stringList(body: Body, key: string, issues: Issues): string[] | undefined {
  if (!has(body, key)) return undefined;
  const v = body[key];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
    issues.add(key, 'must be an array of strings');
    return undefined;
  }
  return v as string[];
}

export function bool(body: Body, key: string, issues: Issues): boolean | undefined {
  if (!has(body, key)) return undefined;
  const v = body[key];
  if (typeof v !== 'boolean') {
    issues.add(key, 'must be true or false');
    return undefined;
  }
  return v;
}

/** Tags are free text; we trim them and drop duplicates and empties, keeping first-seen order. */
export function normalizeTags(tags: string[]): string[] {
  const out: string[] = [];
  for (const raw of tags) {
    const t = raw.trim();
    if (t !== '' && !out.includes(t)) out.push(t);
  }
  return out;
}
