import type { DialectOptions } from './types.js';

/**
 * The dialect options: their allowed values, defaults, validation and named presets. The
 * defaults are the simulator's original choices, byte for byte.
 */

/** Allowed values of every enumerated option; the boolean options take true or false. */
export const DIALECT_VALUES = {
  changeEvents: ['dedicated', 'updated', 'opaque'],
  opaquePayload: ['summary', 'changed'],
  changeFieldNames: ['apiId', 'api', 'snake'],
  changeValues: ['ids', 'refs'],
  timestamps: ['ms-z', 's-z', 'ms-offset', 's-offset'],
  listEnd: ['null', 'empty', 'absent'],
  teamShape: ['plain', 'rich'],
  listPaging: ['keyset', 'offset'],
} as const satisfies Partial<Record<keyof DialectOptions, readonly string[]>>;

const BOOLEAN_OPTIONS = ['extraFields', 'unlistedValues'] as const;

export function defaultDialect(): DialectOptions {
  return {
    changeEvents: 'dedicated',
    opaquePayload: 'summary',
    changeFieldNames: 'apiId',
    changeValues: 'ids',
    timestamps: 'ms-z',
    listEnd: 'null',
    extraFields: false,
    unlistedValues: false,
    teamShape: 'plain',
    listPaging: 'keyset',
  };
}

/**
 * Validates `patch` completely, then merges it into `target`. An unknown key or value throws a
 * TypeError naming it, so a typo never runs a test silently under the default dialect.
 */
export function mergeDialect(target: DialectOptions, patch: Partial<DialectOptions>): void {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) throw new TypeError('dialect must be an object of options');
  const known = defaultDialect();
  for (const [key, value] of Object.entries(patch)) {
    if (!(key in known)) throw new TypeError(`dialect has no option ${JSON.stringify(key)}; options are ${Object.keys(known).join(', ')}`);
    if (value === undefined) continue;
    if ((BOOLEAN_OPTIONS as readonly string[]).includes(key)) {
      if (typeof value !== 'boolean') throw new TypeError(`dialect.${key} must be true or false, got ${JSON.stringify(value)}`);
      continue;
    }
    const allowed = DIALECT_VALUES[key as keyof typeof DIALECT_VALUES] as readonly string[];
    if (typeof value !== 'string' || !allowed.includes(value))
      throw new TypeError(`dialect.${key} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  }
  for (const [key, value] of Object.entries(patch)) if (value !== undefined) (target as unknown as Record<string, unknown>)[key] = value;
}

export function resolveDialect(patch: Partial<DialectOptions> | undefined): DialectOptions {
  const d = defaultDialect();
  if (patch !== undefined) mergeDialect(d, patch);
  return d;
}

/**
 * Named dialects for test suites to loop over. `extras` turns on everything that adds to an
 * answer (extra fields, unlisted values, rich teams).
 */
export const SIMULATOR_DIALECTS: Readonly<Record<string, Readonly<Partial<DialectOptions>>>> = Object.freeze({
  default: {},
  'updated-ids': { changeEvents: 'updated', changeFieldNames: 'apiId', changeValues: 'ids' },
  'updated-refs': { changeEvents: 'updated', changeFieldNames: 'api', changeValues: 'refs' },
  'updated-snake': { changeEvents: 'updated', changeFieldNames: 'snake', changeValues: 'ids' },
  opaque: { changeEvents: 'opaque', opaquePayload: 'summary' },
  'opaque-changed': { changeEvents: 'opaque', opaquePayload: 'changed' },
  'seconds-offset': { timestamps: 's-offset' },
  'list-end-empty': { listEnd: 'empty' },
  'list-end-absent': { listEnd: 'absent' },
  extras: { extraFields: true, unlistedValues: true, teamShape: 'rich' },
  'offset-paging': { listPaging: 'offset' },
});

/** The preset called `name`, complete; throws a TypeError listing the presets when there is none. */
export function dialectPreset(name: string): DialectOptions {
  const preset = Object.prototype.hasOwnProperty.call(SIMULATOR_DIALECTS, name) ? SIMULATOR_DIALECTS[name] : undefined;
  if (preset === undefined)
    throw new TypeError(
      `no simulator dialect is called ${JSON.stringify(name)}; presets are ${Object.keys(SIMULATOR_DIALECTS).join(', ')}`,
    );
  return resolveDialect(preset);
}

/**
 * A dialect with every option drawn from `rng` (a function returning numbers in [0, 1), e.g. a
 * property test's seeded generator), so one seed names one combination of all the options.
 */
export function randomDialect(rng: () => number): DialectOptions {
  const pick = <T>(values: readonly T[]): T => values[Math.min(values.length - 1, Math.floor(rng() * values.length))] as T;
  return {
    changeEvents: pick(DIALECT_VALUES.changeEvents),
    opaquePayload: pick(DIALECT_VALUES.opaquePayload),
    changeFieldNames: pick(DIALECT_VALUES.changeFieldNames),
    changeValues: pick(DIALECT_VALUES.changeValues),
    timestamps: pick(DIALECT_VALUES.timestamps),
    listEnd: pick(DIALECT_VALUES.listEnd),
    extraFields: pick([false, true]),
    unlistedValues: pick([false, true]),
    teamShape: pick(DIALECT_VALUES.teamShape),
    listPaging: pick(DIALECT_VALUES.listPaging),
  };
}

/** Environment variable naming the preset used when `startSimulator` is given no `dialect`. */
export const DIALECT_ENV = 'WSMIRROR_SIMULATOR_DIALECT';

/** The starting dialect: the options given, else the preset the environment names, else the default. */
export function startingDialect(given: Partial<DialectOptions> | undefined, env: NodeJS.ProcessEnv = process.env): DialectOptions {
  if (given !== undefined) return resolveDialect(given);
  const name = env[DIALECT_ENV];
  if (name === undefined || name === '') return defaultDialect();
  try {
    return dialectPreset(name);
  } catch (err) {
    throw new TypeError(`${DIALECT_ENV}: ${(err as Error).message}`, { cause: err });
  }
}

/** Whether the change log's payloads are in the original form (then each event's field changes can be read back from it). */
export function logsOriginalForm(d: DialectOptions): boolean {
  return d.changeEvents === 'dedicated' && d.changeFieldNames === 'apiId' && d.changeValues === 'ids';
}
