import { createApiClient, type ApiClient } from '../api/index.js';
import { loadConfig, requireUpstream, type Config, type ConfigFlags } from '../config/index.js';
import { createLogger, type Logger } from '../log/index.js';
import { openStore, type Store } from '../store/index.js';
import type { SyncContext, SyncHooks } from '../sync/index.js';
import type { Lifecycle } from './lifecycle.js';

export interface GlobalFlags extends ConfigFlags {}

export interface Resources {
  config: Config;
  logger: Logger;
  secrets: string[];
}

/** Config and logger: what every command needs before anything else. */
export function loadResources(flags: GlobalFlags, secretsOut: string[]): Resources {
  const { config, warnings } = loadConfig({ flags });
  if (config.apiKey) secretsOut.push(config.apiKey);
  const logger = createLogger({ level: config.logLevel, secrets: secretsOut });
  for (const warning of warnings) logger.warn(warning);
  return { config, logger, secrets: secretsOut };
}

/** Opens the mirror and applies pending migrations (every command does this first, SPEC 2). */
export async function openMirror(res: Resources, life: Lifecycle, options: { migrate?: boolean; readonly?: boolean } = {}): Promise<Store> {
  // CLI processes exit right after closing: leaving the connection to the OS spares readers the
  // exclusive lock of SQLite's checkpoint-on-close (main.ts always ends with process.exit).
  const store = await openStore({ database: res.config.database, readonly: options.readonly ?? false, leaveOpenOnClose: true });
  life.defer(() => store.close());
  if (options.migrate !== false) {
    const { applied } = await store.migrate();
    if (applied.length > 0) res.logger.info({ applied }, 'migrations applied');
  }
  return store;
}

export function openClient(res: Resources, life: Lifecycle): ApiClient {
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
    signal: life.abort.signal,
    logger: res.logger,
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
