import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { configSchema, type Config } from '../config/index.js';
import { EXIT, ExitError, WsmirrorError } from '../util/errors.js';

/** Schemas the fleet keeps for itself; a workspace may not take one of them. */
export const FLEET_SCHEMA = 'wsmirror_fleet';
export const QUEUE_SCHEMA = 'wsmirror_queue';
export const VIEWS_SCHEMA = 'wsmirror_all';
const RESERVED_SCHEMAS = new Set([FLEET_SCHEMA, QUEUE_SCHEMA, VIEWS_SCHEMA, 'public', 'information_schema']);

/** Per-workspace options a fleet file may not set per workspace: they belong to the worker process. */
const WORKER_ONLY = new Set(['database', 'http', 'logLevel', 'fileMode', 'directoryMode', 'apiKey']);

const identifier = /^[a-z_][a-z0-9_-]{0,62}$/;

const workspaceEntry = z
  .object({
    id: z
      .string()
      .regex(identifier, 'must be lower-case letters, digits, "_" or "-", starting with a letter or "_" (at most 63), e.g. "acme"'),
    apiKeyFile: z.string().min(1, 'must be a file path, e.g. "/var/run/secrets/wsmirror/acme"').optional(),
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name, e.g. "ACME_API_KEY"')
      .optional(),
    paused: z.boolean().default(false).describe('true: declared, but no slice runs until it is false again'),
  })
  .catchall(z.unknown());

/** Options of the worker process itself (not of any one workspace). */
const workerSchema = z
  .object({
    concurrency: z.number().int().min(1).max(64).default(4).describe('slices one worker runs at once (--concurrency)'),
    sliceSeconds: z.number().int().min(2).max(600).default(20).describe('longest a slice may run before it commits and yields'),
    http: z
      .object({
        host: z.string().min(1).default('127.0.0.1'),
        port: z.number().int().min(0).max(65_535).default(9464).describe('fleet page and /metrics (0 disables)'),
        authToken: z.string().min(16, 'must be at least 16 characters').optional(),
      })
      .strict()
      .default({ host: '127.0.0.1', port: 9464 }),
    logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  })
  .strict();

const fleetSchema = z
  .object({
    database: z
      .string()
      .regex(/^postgres(ql)?:\/\//i, 'must be a postgres:// URL: the fleet shares one PostgreSQL database (its job queue lives there)'),
    defaults: z.record(z.string(), z.unknown()).default({}).describe('per-workspace options every workspace starts from'),
    worker: workerSchema.default(workerSchema.parse({})),
    workspaces: z.array(z.unknown()).describe('the workspaces this fleet mirrors (each checked on its own, below)'),
  })
  .strict();

export type WorkerOptions = z.infer<typeof workerSchema>;

/** One declared workspace as the fleet table keeps it: never its key, only where to read it. */
export interface WorkspaceSpec {
  id: string;
  schema: string;
  baseUrl: string;
  keyFile: string | null;
  keyEnv: string | null;
  paused: boolean;
  /** The per-workspace options (defaults merged with the entry's overrides), without the key. */
  settings: Record<string, unknown>;
}

export interface FleetFile {
  database: string;
  worker: WorkerOptions;
  workspaces: WorkspaceSpec[];
}

/** Reads and validates a fleet file; every problem at once (exit 2), each naming its key and the fix. */
export function loadFleetFile(path: string): FleetFile {
  const file = resolve(path);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ExitError(EXIT.usage, `Cannot read the fleet file ${file} (${(err as Error).message}); give --config a JSON fleet file.`, {
      cause: err,
      code: 'CONFIG_INVALID',
    });
  }
  return parseFleet(raw, file);
}

/** Validates a parsed fleet file (exported for tests and `fleet apply`); every problem at once. */
export function parseFleet(raw: unknown, where?: string): FleetFile {
  const problems: string[] = [];
  const parsed = fleetSchema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push(`${pathText(issue.path)}: ${issueText(issue)}`);
    throw invalid(where, problems);
  }
  const { database, defaults, worker } = parsed.data;
  for (const key of Object.keys(defaults)) {
    if (WORKER_ONLY.has(key)) problems.push(`defaults.${key}: ${workerOnlyText(key)}`);
  }
  const workspaces: WorkspaceSpec[] = [];
  const indexes = new Map<WorkspaceSpec, number>();
  parsed.data.workspaces.forEach((raw, i) => {
    const entry = workspaceEntry.safeParse(raw);
    if (entry.success) {
      const spec = workspaceSpec(entry.data, i, defaults, problems);
      workspaces.push(spec);
      indexes.set(spec, i);
    } else for (const issue of entry.error.issues) problems.push(`${pathText([`workspaces[${i}]`, ...issue.path])}: ${issueText(issue)}`);
  });
  duplicates(workspaces, indexes, (w) => w.id, 'id', problems);
  duplicates(workspaces, indexes, (w) => w.schema, 'schema', problems);
  if (problems.length > 0) throw invalid(where, problems);
  return { database, worker, workspaces };
}

function workspaceSpec(
  entry: z.infer<typeof workspaceEntry>,
  i: number,
  defaults: Record<string, unknown>,
  problems: string[],
): WorkspaceSpec {
  const at = `workspaces[${i}]`;
  const { id, apiKeyFile, apiKeyEnv, paused, ...overrides } = entry;
  for (const key of Object.keys(overrides)) if (WORKER_ONLY.has(key)) problems.push(`${at}.${key}: ${workerOnlyText(key)}`);
  if ((apiKeyFile === undefined) === (apiKeyEnv === undefined)) {
    problems.push(`${at}: give exactly one of apiKeyFile (a mounted Secret file) or apiKeyEnv (an environment variable name)`);
  }
  const settings: Record<string, unknown> = { ...defaults, ...overrides };
  for (const key of WORKER_ONLY) delete settings[key];
  const schema = typeof settings.schema === 'string' ? settings.schema : id.replace(/-/g, '_');
  settings.schema = schema;
  if (RESERVED_SCHEMAS.has(schema) || schema.startsWith('pg_')) {
    problems.push(`${at}.schema: "${schema}" is reserved for the fleet or PostgreSQL; choose another schema (or id)`);
  }
  const check = configSchema.safeParse({ ...settings, database: 'postgres://check', apiKey: 'placeholder-key' });
  if (!check.success) {
    for (const issue of check.error.issues) {
      const key = pathText(issue.path);
      const origin = issue.path.length > 0 && String(issue.path[0]) in overrides ? at : 'defaults';
      problems.push(`${origin}.${key} (workspace "${id}"): ${issueText(issue)}`);
    }
  }
  if (typeof settings.baseUrl !== 'string')
    problems.push(`${at}.baseUrl: required, the workspace address, e.g. "https://acme.example.com"`);
  return {
    id,
    schema,
    baseUrl: typeof settings.baseUrl === 'string' ? settings.baseUrl : '',
    keyFile: apiKeyFile ?? null,
    keyEnv: apiKeyEnv ?? null,
    paused,
    settings,
  };
}

/**
 * The full Config of one workspace's slice, by the single-workspace schema and its defaults. The
 * key comes from `readApiKey`, at each slice, so a rotated Secret file is used from the next slice.
 */
export function workspaceConfig(spec: WorkspaceSpec, database: string, apiKey: string, logLevel: string): Config {
  return configSchema.parse({ ...spec.settings, database, apiKey, schema: spec.schema, logLevel, http: { port: 0 } });
}

/** The workspace's key, from its file (trailing newline trimmed) or environment variable; never stored. */
export function readApiKey(spec: Pick<WorkspaceSpec, 'id' | 'keyFile' | 'keyEnv'>, env: NodeJS.ProcessEnv = process.env): string {
  if (spec.keyFile !== null) {
    let text: string;
    try {
      text = readFileSync(spec.keyFile, 'utf8').trim();
    } catch (err) {
      throw new WsmirrorError(
        'KEY_UNAVAILABLE',
        `Cannot read the API key file of workspace "${spec.id}" (${spec.keyFile}: ${(err as NodeJS.ErrnoException).code ?? 'error'}); mount its Secret on every worker at that path.`,
      );
    }
    if (text.length === 0)
      throw new WsmirrorError('KEY_UNAVAILABLE', `The API key file of workspace "${spec.id}" (${spec.keyFile}) is empty.`);
    return text;
  }
  const value = spec.keyEnv === null ? undefined : env[spec.keyEnv]?.trim();
  if (!value) {
    throw new WsmirrorError(
      'KEY_UNAVAILABLE',
      `The environment variable ${spec.keyEnv ?? '(none)'} holding the API key of workspace "${spec.id}" is not set on this worker; set it on every worker.`,
    );
  }
  return value;
}

function workerOnlyText(key: string): string {
  if (key === 'apiKey') return 'never put a key in the fleet file: use apiKeyFile (a mounted Secret) or apiKeyEnv';
  if (key === 'database') return 'the fleet has one database: set it once at the top level';
  return 'a worker option: set it under "worker" instead';
}

function duplicates(
  list: WorkspaceSpec[],
  indexes: Map<WorkspaceSpec, number>,
  key: (w: WorkspaceSpec) => string,
  name: string,
  problems: string[],
): void {
  const seen = new Map<string, number>();
  list.forEach((w) => {
    const i = indexes.get(w)!;
    const k = key(w);
    const first = seen.get(k);
    if (first !== undefined) problems.push(`workspaces[${i}].${name}: "${k}" is already used by workspaces[${first}]; each must be unique`);
    else seen.set(k, i);
  });
}

function pathText(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('') || '(top level)';
}

function issueText(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys')
    return `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}: remove or rename`;
  if (issue.code === 'invalid_type') return `expected ${issue.expected}`;
  return issue.message;
}

function invalid(where: string | undefined, problems: string[]): ExitError {
  return new ExitError(
    EXIT.usage,
    `The fleet file${where ? ` ${where}` : ''} is invalid (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n  - ${problems.join('\n  - ')}`,
    { code: 'CONFIG_INVALID' },
  );
}
