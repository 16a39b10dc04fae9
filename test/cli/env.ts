import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Environment for a spawned CLI against a local simulator: a config file with fast retries and a
 * high request ceiling (loopback), the key and address from the environment as a user would.
 */
export function cliConfig(dir: string, opts: { url: string; apiKey?: string; database?: string; extra?: Record<string, unknown> }): Record<string, string> {
  const configPath = join(dir, 'wsmirror.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      maxRequestsPerSecond: 2000,
      concurrency: 8,
      requestTimeoutMs: 5000,
      retry: { maxAttempts: 4, maxDelayMs: 50 },
      http: { port: 0 },
      schedule: '* * * * * *',
      ...opts.extra,
    }),
  );
  return {
    WSMIRROR_CONFIG: configPath,
    WSMIRROR_BASE_URL: opts.url,
    WSMIRROR_API_KEY: opts.apiKey ?? 'test-key',
    WSMIRROR_DATABASE: opts.database ?? join(dir, 'mirror.sqlite'),
  };
}
