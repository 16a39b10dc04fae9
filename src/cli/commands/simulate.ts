import { Option, type Command } from 'commander';
import {
  DIALECT_ENV,
  DIALECT_VALUES,
  SIMULATOR_DIALECTS,
  startSimulator,
  type DialectOptions,
  type SimulatorOptions,
} from '../../simulator/index.js';
import { Lifecycle } from '../../session/index.js';
import { usageError } from '../session.js';
import { workspacesFromFlag } from './simulate-workspaces.js';

export interface SimulateOptions {
  host: string;
  port: string;
  /** Accepted keys; default `['test-key']`. */
  apiKey?: string[];
  seed: string;
  tickets: string;
  deals: string;
  pipelines: string;
  activity: string;
  control?: boolean;
  latencyMs?: string;
  errorRate?: string;
  rateLimitRate?: string;
  dropRate?: string;
  rateLimit?: string;
  rateLimitBurst?: string;
  dialect?: string;
  changeEvents?: string;
  opaquePayload?: string;
  changeFieldNames?: string;
  changeValues?: string;
  timestamps?: string;
  listEnd?: string;
  extraFields?: boolean;
  unlistedValues?: boolean;
  teamShape?: string;
  listPaging?: string;
  /** A count of workspaces, or a JSON file of them; each served under /w/<id>. */
  workspaces?: string;
}

/** The flag of each enumerated dialect option. */
const DIALECT_FLAGS = {
  changeEvents: 'change-events',
  opaquePayload: 'opaque-payload',
  changeFieldNames: 'change-field-names',
  changeValues: 'change-values',
  timestamps: 'timestamps',
  listEnd: 'list-end',
  teamShape: 'team-shape',
  listPaging: 'list-paging',
} as const satisfies Record<keyof typeof DIALECT_VALUES, string>;

const DIALECT_HELP: Record<keyof typeof DIALECT_FLAGS, string> = {
  changeEvents: 'how a field change is logged',
  opaquePayload: 'payload of an opaque change',
  changeFieldNames: 'field names in change payloads',
  changeValues: 'from/to of reference fields, as ids or {id, name}',
  timestamps: 'form of every timestamp',
  listEnd: 'nextCursor of the last page, as null, "" or no key',
  teamShape: 'team objects, as {id, name} or with email, memberCount and lead',
  listPaging: 'how ticket and deal lists page: by a kept snapshot (keyset) or by position (offset)',
};

/** The dialect flags of `wsmirror simulate` (docs/simulator.md, "Dialects"). */
export function addDialectFlags(cmd: Command): Command {
  cmd.addOption(
    new Option('--dialect <preset>', `a named dialect; the flags below override it (${Object.keys(SIMULATOR_DIALECTS).join(', ')})`),
  );
  for (const [key, flag] of Object.entries(DIALECT_FLAGS) as [keyof typeof DIALECT_FLAGS, string][])
    cmd.addOption(new Option(`--${flag} <value>`, `${DIALECT_HELP[key]} (${DIALECT_VALUES[key].join(', ')})`));
  return cmd
    .addOption(new Option('--extra-fields', 'unknown extra fields on every object the API returns'))
    .addOption(new Option('--unlisted-values', 'statuses, priorities and author types the upstream never lists'));
}

function preset(name: string, source: string): Partial<DialectOptions> {
  const found = Object.prototype.hasOwnProperty.call(SIMULATOR_DIALECTS, name) ? SIMULATOR_DIALECTS[name] : undefined;
  if (found === undefined) throw usageError(`${source} must be one of ${Object.keys(SIMULATOR_DIALECTS).join(', ')}; got "${name}".`);
  return { ...found };
}

/**
 * The dialect the flags ask for, over the preset of --dialect (else of WSMIRROR_SIMULATOR_DIALECT).
 * A preset or value that does not exist is a usage error naming its flag.
 */
export function dialectFromFlags(opts: SimulateOptions, env: NodeJS.ProcessEnv = process.env): Partial<DialectOptions> {
  let dialect: Partial<DialectOptions> = {};
  if (opts.dialect !== undefined) dialect = preset(opts.dialect, '--dialect');
  else if (env[DIALECT_ENV]) dialect = preset(env[DIALECT_ENV], DIALECT_ENV);
  for (const [key, flag] of Object.entries(DIALECT_FLAGS) as [keyof typeof DIALECT_FLAGS, string][]) {
    const value = opts[key];
    if (value === undefined) continue;
    const allowed: readonly string[] = DIALECT_VALUES[key];
    if (!allowed.includes(value)) throw usageError(`--${flag} must be one of ${allowed.join(', ')}; got "${value}".`);
    (dialect as Record<string, unknown>)[key] = value;
  }
  if (opts.extraFields) dialect.extraFields = true;
  if (opts.unlistedValues) dialect.unlistedValues = true;
  return dialect;
}

/** Serves the bundled workspace simulator until SIGTERM/SIGINT. */
export async function simulateCommand(opts: SimulateOptions): Promise<void> {
  const int = (name: string, value: string, min: number) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw usageError(`--${name} must be a whole number of at least ${min}; got "${value}".`);
    return n;
  };
  const fraction = (name: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!(n >= 0 && n <= 1)) throw usageError(`--${name} must be a fraction from 0 to 1; got "${value}".`);
    return n;
  };
  const positive = (name: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!(n > 0) || !Number.isFinite(n)) throw usageError(`--${name} must be a number of requests per second above 0; got "${value}".`);
    return n;
  };
  const dialect = dialectFromFlags(opts);
  const faults = Object.fromEntries(
    Object.entries({
      latencyMs: opts.latencyMs === undefined ? undefined : int('latency-ms', opts.latencyMs, 0),
      errorRate: fraction('error-rate', opts.errorRate),
      rateLimitRate: fraction('rate-limit-rate', opts.rateLimitRate),
      dropRate: fraction('drop-rate', opts.dropRate),
      rateLimitPerSecond: positive('rate-limit', opts.rateLimit),
      rateLimitBurst: opts.rateLimitBurst === undefined ? undefined : int('rate-limit-burst', opts.rateLimitBurst, 1),
    }).filter(([, v]) => v !== undefined),
  );
  const options: SimulatorOptions = {
    host: opts.host,
    port: int('port', opts.port, 0),
    seed: int('seed', opts.seed, 0),
    tickets: int('tickets', opts.tickets, 0),
    deals: int('deals', opts.deals, 0),
    pipelines: int('pipelines', opts.pipelines, 1),
    activity: Number(opts.activity) || 0,
    control: Boolean(opts.control),
    faults,
    dialect,
  };
  const close = opts.workspaces === undefined ? await serveOne(opts, options) : await serveMany(opts, opts.workspaces, options);
  const life = new Lifecycle();
  life.defer(close);
  await new Promise<void>((resolve) => {
    life.handleSignals({ graceMs: 5_000, onFirst: () => resolve(), onForce: () => process.exit(1) });
  });
  await life.close();
}

async function serveOne(opts: SimulateOptions, options: SimulatorOptions): Promise<() => Promise<void>> {
  const keys = opts.apiKey && opts.apiKey.length > 0 ? opts.apiKey : ['test-key'];
  const sim = await startSimulator({ ...options, apiKeys: Object.fromEntries(keys.map((k) => [k, ''])) });
  process.stdout.write(
    `Workspace simulator listening on ${sim.url} (API under ${sim.url}/api/v1, ${keys.length} key(s)${opts.control ? `, control surface at ${sim.url}/_control` : ''}). Stop with Ctrl-C.\n`,
  );
  return () => sim.close();
}

/** Many workspaces, each under /w/<id>; the other flags are every workspace's defaults. */
async function serveMany(opts: SimulateOptions, flag: string, options: SimulatorOptions): Promise<() => Promise<void>> {
  if (opts.apiKey && opts.apiKey.length > 0)
    throw usageError("--api-key names the single workspace's keys; with --workspaces each key is key-<id> unless the file names one.");
  const workspaces = workspacesFromFlag(flag);
  let sim;
  try {
    sim = await startSimulator({ ...options, workspaces });
  } catch (err) {
    // Values the file gave that the simulator refuses (a bad id, count, dialect or fault) are the user's to fix.
    if (err instanceof RangeError || err instanceof TypeError) throw usageError(`--workspaces ${flag}: ${err.message}.`);
    throw err;
  }
  const at = `${sim.url}/w/<id>`;
  process.stdout.write(
    `Workspace simulator listening on ${sim.url} with ${workspaces.length} workspace(s) (${sim.workspaces
      .slice(0, 3)
      .map((w) => w.id)
      .join(
        ', ',
      )}${workspaces.length > 3 ? ', ...' : ''}), each under ${at} (API under ${at}/api/v1${opts.control ? `, control surface at ${at}/_control` : ''}). Stop with Ctrl-C.\n`,
  );
  return () => sim.close();
}
