import type { Agent } from 'undici';
import { createApiClient, type ApiClient, type RequestEvent } from '../api/index.js';
import { loadConfig, requireUpstream, type Config, type ConfigFlags } from '../config/index.js';
import { createLogger, type Logger } from '../log/index.js';
import { openStore, type AcquireLockOptions, type SharedPostgres, type Store, type WriterLock } from '../store/index.js';
import { STATE_VERSION, upgradeStoredState, type SyncContext, type SyncHooks } from '../sync/index.js';
import type { Lifecycle } from './lifecycle.js';
import type { SecretRedactor } from '../util/redact.js';

export type GlobalFlags = ConfigFlags;

export interface Resources {
  config: Config;
  logger: Logger;
  /** Scrubs this invocation's secrets; the logger and the exit reporter share it. */
  redactor: SecretRedactor;
  /** PostgreSQL connections this process shares among many mirrors (a fleet worker's); default: the store opens its own. */
  shared?: SharedPostgres;
  /** Upstream connections this process shares among many clients (a fleet worker's); default: each client opens its own. */
  agent?: Agent;
}

/** Config and logger: what every command needs before anything else. */
export function loadResources(flags: GlobalFlags, redactor: SecretRedactor): Resources {
  const { config, warnings } = loadConfig({ flags });
  const res = resourcesFor(config, redactor);
  for (const warning of warnings) res.logger.warn(warning);
  return res;
}

/** The resources of a config built without reading one (the demo's), by the same rules. */
export function resourcesFor(config: Config, redactor: SecretRedactor): Resources {
  // Registered before the logger exists, so no line it ever writes can carry them.
  const password = databasePassword(config.database);
  redactor.add(config.apiKey, config.http.authToken, password, password === null ? null : encodeURIComponent(password));
  return { config, logger: createLogger({ level: config.logLevel, redactor }), redactor };
}

/** The password of a postgres:// URL, so the logger and the exit reporter can scrub it. */
function databasePassword(database: string): string | null {
  if (!/^postgres(ql)?:\/\//i.test(database)) return null;
  try {
    const password = decodeURIComponent(new URL(database).password);
    return password.length > 0 ? password : null;
  } catch {
    return null;
  }
}

/**
 * Opens the mirror without touching its schema. Readers check that no migration pends; writers
 * migrate only once they hold the writer lock (openLockedMirror), so a standby or a refused
 * one-shot command never changes the schema under the running writer.
 */
export async function openMirror(res: Resources, life: Lifecycle, options: { readonly?: boolean } = {}): Promise<Store> {
  const { config } = res;
  // CLI processes exit right after closing: leaving the connection to the OS spares readers the
  // exclusive lock of SQLite's checkpoint-on-close (main.ts always ends with process.exit).
  const store = await openStore({
    database: config.database,
    readonly: options.readonly ?? false,
    leaveOpenOnClose: true,
    schema: config.schema,
    fileMode: parseInt(config.fileMode, 8),
    directoryMode: parseInt(config.directoryMode, 8),
    ...(res.shared ? { shared: res.shared } : {}),
  });
  life.defer(() => store.close());
  if (options.readonly) await store.migrate();
  return store;
}

/**
 * Opens the mirror for writing: the writer lock first (waiting as a hot standby when asked), then
 * the migrations, so only the lock holder ever migrates and two writers starting at once on a
 * fresh file never race on the schema.
 */
export async function openLockedMirror(
  res: Resources,
  life: Lifecycle,
  lockOptions: AcquireLockOptions,
  beforeMigrate?: (store: Store, lock: WriterLock) => void,
): Promise<{ store: Store; lock: WriterLock; applied: string[] }> {
  const store = await openMirror(res, life);
  return { store, ...(await takeWriterLock(res, life, store, lockOptions, beforeMigrate)) };
}

/** The writer lock on a mirror already open (openMirror), then the migrations: the second half of openLockedMirror. */
export async function takeWriterLock(
  res: Resources,
  life: Lifecycle,
  store: Store,
  lockOptions: AcquireLockOptions,
  beforeMigrate?: (store: Store, lock: WriterLock) => void,
): Promise<{ lock: WriterLock; applied: string[] }> {
  const lock = await store.acquireWriterLock(lockOptions);
  life.defer(() => lock.release());
  beforeMigrate?.(store, lock);
  const { applied } = await store.migrate();
  if (applied.length > 0) res.logger.info({ applied }, 'migrations applied');
  const stateFrom = await upgradeStoredState(store);
  if (stateFrom !== STATE_VERSION) res.logger.debug({ from: stateFrom, to: STATE_VERSION }, 'sync state upgraded');
  return { lock, applied };
}

/**
 * `onRequest` sees every attempt as it ends (the daemon's request metrics and progress signal);
 * `startRatePerSecond` resumes an "auto" rate learned earlier (a fleet slice's previous one).
 */
export function openClient(res: Resources, life: Lifecycle, onRequest?: (e: RequestEvent) => void, startRatePerSecond?: number): ApiClient {
  const { baseUrl, apiKey } = requireUpstream(res.config);
  const client = createApiClient({
    baseUrl,
    apiKey,
    requestTimeoutMs: res.config.requestTimeoutMs,
    retry: { maxAttempts: res.config.retry.maxAttempts, maxDelayMs: res.config.retry.maxDelayMs },
    maxRequestsPerSecond: res.config.maxRequestsPerSecond,
    maxRequestsPerSecondCeiling: res.config.maxRequestsPerSecondCeiling,
    concurrency: res.config.concurrency,
    pageSize: res.config.pageSize,
    maxResponseBytes: res.config.maxResponseBytes,
    signal: life.abort.signal,
    logger: res.logger,
    ...(onRequest ? { onRequest } : {}),
    ...(startRatePerSecond !== undefined ? { startRatePerSecond } : {}),
    ...(res.agent ? { agent: res.agent } : {}),
  });
  life.defer(() => client.close());
  return client;
}

export function syncContext(res: Resources, store: Store, client: ApiClient, life: Lifecycle, hooks?: SyncHooks): SyncContext {
  return {
    store,
    client,
    logger: res.logger,
    config: res.config,
    stopSignal: life.stop.signal,
    now: () => new Date().toISOString(),
    ...(hooks ? { hooks } : {}),
  };
}
