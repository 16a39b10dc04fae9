import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { EXIT, ExitError } from '../util/errors.js';
import { configSchema, type Config } from './schema.js';

/** Values given on the command line; undefined means "not given". */
export interface ConfigFlags {
  config?: string;
  database?: string;
  logLevel?: string;
}

export interface LoadConfigOptions {
  flags?: ConfigFlags;
  /** Default: process.env. */
  env?: NodeJS.ProcessEnv;
  /** Directory that `./wsmirror.json` is looked up in. Default: process.cwd(). */
  cwd?: string;
}

export interface LoadedConfig {
  config: Config;
  /** Path of the config file that was read, if any. */
  file: string | null;
  /** Problems that do not stop the start (the daemon logs them). */
  warnings: string[];
}

/** Layers: default < file < environment < flags. Every problem is reported at once, exit 2. */
export function loadConfig(options: LoadConfigOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const flags = options.flags ?? {};
  const warnings: string[] = [];

  const explicitFile = flags.config ?? env.WSMIRROR_CONFIG;
  const defaultFile = resolve(cwd, 'wsmirror.json');
  const file = explicitFile ? resolve(cwd, explicitFile) : existsSync(defaultFile) ? defaultFile : null;
  const fromFile = file ? readConfigFile(file, Boolean(explicitFile)) : {};
  if (fromFile && typeof fromFile === 'object' && 'apiKey' in fromFile) {
    warnings.push(`the API key is stored in ${file}; prefer the WSMIRROR_API_KEY environment variable`);
  }

  const fromEnv: Record<string, unknown> = {};
  if (env.WSMIRROR_BASE_URL) fromEnv.baseUrl = env.WSMIRROR_BASE_URL;
  if (env.WSMIRROR_API_KEY) fromEnv.apiKey = env.WSMIRROR_API_KEY;
  if (env.WSMIRROR_DATABASE) fromEnv.database = env.WSMIRROR_DATABASE;
  if (env.WSMIRROR_LOG_LEVEL) fromEnv.logLevel = env.WSMIRROR_LOG_LEVEL;
  // Containers need the health server on 0.0.0.0 without shipping a config file.
  const http: Record<string, unknown> = {};
  if (env.WSMIRROR_HTTP_HOST) http.host = env.WSMIRROR_HTTP_HOST;
  if (env.WSMIRROR_HTTP_PORT) http.port = numeric(env.WSMIRROR_HTTP_PORT);
  if (env.WSMIRROR_HTTP_AUTH_TOKEN) http.authToken = env.WSMIRROR_HTTP_AUTH_TOKEN;
  if (Object.keys(http).length > 0) fromEnv.http = http;

  const fromFlags: Record<string, unknown> = {};
  if (flags.database !== undefined) fromFlags.database = flags.database;
  if (flags.logLevel !== undefined) fromFlags.logLevel = flags.logLevel;

  const merged = deepMerge(deepMerge(fromFile as Record<string, unknown>, fromEnv), fromFlags);
  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) {
    const sources = { file, env: fromEnv, flags: fromFlags };
    const lines = parsed.error.issues.map((issue) => describeIssue(issue, merged, sources));
    throw new ExitError(
      EXIT.usage,
      `The configuration is invalid (${lines.length} problem${lines.length === 1 ? '' : 's'}):\n  - ${lines.join('\n  - ')}`,
      { cause: parsed.error, code: 'CONFIG_INVALID' },
    );
  }
  return { config: deepFreeze(parsed.data), file, warnings };
}

/** Commands that talk to the workspace need both; say which is missing and how to set it. */
export function requireUpstream(config: Config): { baseUrl: string; apiKey: string } {
  const missing: string[] = [];
  if (!config.baseUrl) missing.push('baseUrl (set WSMIRROR_BASE_URL or "baseUrl" in the config file)');
  if (!config.apiKey) missing.push('apiKey (set WSMIRROR_API_KEY)');
  if (missing.length > 0) {
    throw new ExitError(EXIT.usage, `This command needs the workspace address and key; missing: ${missing.join(' and ')}.`, {
      code: 'CONFIG_INVALID',
    });
  }
  return { baseUrl: config.baseUrl!, apiKey: config.apiKey! };
}

/** Environment values are text; numbers are converted so the schema can range-check them. */
function numeric(value: string): number | string {
  const n = Number(value);
  return value.trim() !== '' && Number.isFinite(n) ? n : value;
}

function readConfigFile(path: string, explicit: boolean): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const hint = explicit ? 'check --config / WSMIRROR_CONFIG' : 'fix its permissions';
    throw new ExitError(EXIT.usage, `Cannot read the config file ${path}: ${(err as Error).message}; ${hint}.`, {
      cause: err,
      code: 'CONFIG_INVALID',
    });
  }
  try {
    const value: unknown = JSON.parse(text);
    if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('the top level must be a JSON object');
    return value;
  } catch (err) {
    throw new ExitError(EXIT.usage, `The config file ${path} is not valid JSON (${(err as Error).message}); see config.example.json.`, {
      cause: err,
      code: 'CONFIG_INVALID',
    });
  }
}

function describeIssue(
  issue: z.core.$ZodIssue,
  merged: Record<string, unknown>,
  sources: { file: string | null; env: Record<string, unknown>; flags: Record<string, unknown> },
): string {
  const key = issue.path.join('.') || '(top level)';
  if (issue.code === 'unrecognized_keys') {
    const where = issue.path.length ? `${key}.` : '';
    const known = knownKeys(issue.path);
    const named = issue.keys.map((k) => {
      const near = closest(k, known);
      return `"${where}${k}"${near ? ` (did you mean "${where}${near}"?)` : ''}`;
    });
    return `unknown key${issue.keys.length > 1 ? 's' : ''} ${named.join(', ')}: remove or rename ${issue.keys.length > 1 ? 'them' : 'it'} (see config.example.json for the keys)`;
  }
  const given = valueAt(merged, issue.path);
  const shown = SECRET_KEYS.has(key) ? '(hidden)' : JSON.stringify(given);
  const top = String(issue.path[0] ?? '');
  const origin =
    top in sources.flags
      ? ' (from a flag)'
      : top in sources.env
        ? ' (from the environment)'
        : sources.file
          ? ` (from ${sources.file})`
          : '';
  return `${key}: got ${shown}${origin}; ${allowedText(issue)}`;
}

/** Keys whose values an error never repeats. */
const SECRET_KEYS = new Set(['apiKey', 'http.authToken']);

/** The keys the schema allows at `path` (the top level, `http` or `retry`). */
function knownKeys(path: readonly PropertyKey[]): string[] {
  let schema: z.ZodType = configSchema;
  for (const p of path) {
    let inner: unknown = schema;
    // Unwrap .default()/.optional() to reach the object.
    while (inner && typeof inner === 'object' && 'unwrap' in inner && typeof inner.unwrap === 'function' && !('shape' in inner)) {
      inner = (inner as { unwrap(): unknown }).unwrap();
    }
    const shape = (inner as { shape?: Record<string, z.ZodType> }).shape;
    if (!shape || !(String(p) in shape)) return [];
    schema = shape[String(p)]!;
  }
  let inner: unknown = schema;
  while (inner && typeof inner === 'object' && 'unwrap' in inner && !('shape' in inner)) inner = (inner as { unwrap(): unknown }).unwrap();
  return Object.keys((inner as { shape?: object }).shape ?? {});
}

/** The known key closest to `given` by edit distance (case-insensitive), if it is close enough. */
function closest(given: string, known: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const k of known) {
    const d = editDistance(given.toLowerCase(), k.toLowerCase());
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best !== null && bestDistance <= Math.max(2, Math.floor(best.length / 3)) ? best : null;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

function allowedText(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return `expected a ${issue.expected}`;
    case 'too_small':
      return `must be at least ${String(issue.minimum)}`;
    case 'too_big':
      return `must be at most ${String(issue.maximum)}`;
    case 'invalid_value':
      return `allowed: ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return issue.message;
  }
}

function valueAt(obj: unknown, path: PropertyKey[]): unknown {
  let cur: unknown = obj;
  for (const p of path) {
    if (!cur || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[p];
  }
  return cur;
}

function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const prev = out[k];
    out[k] =
      prev && v && typeof prev === 'object' && typeof v === 'object' && !Array.isArray(prev) && !Array.isArray(v)
        ? deepMerge(prev as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
