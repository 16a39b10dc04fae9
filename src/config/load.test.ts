import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitError } from '../util/errors.js';
import { loadConfig, requireUpstream } from './load.js';

function dirWith(config?: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-config-'));
  if (config !== undefined) writeFileSync(join(dir, 'wsmirror.json'), JSON.stringify(config));
  return dir;
}

describe('loadConfig', () => {
  it('applies defaults and freezes the result', () => {
    const { config, file } = loadConfig({ cwd: dirWith(), env: {} });
    expect(file).toBeNull();
    expect(config.database).toBe('./data/mirror.sqlite');
    expect(config.pageSize).toBe(100);
    expect(config.retry).toEqual({ maxAttempts: 6, maxDelayMs: 60_000 });
    expect(config.http).toEqual({ host: '127.0.0.1', port: 9464, stallSeconds: 900 });
    expect(config).toMatchObject({ schema: 'public', eventsRetentionDays: 90, fileMode: '0600', directoryMode: '0700' });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.retry)).toBe(true);
  });

  it('layers default < file < environment < flag', () => {
    const cwd = dirWith({ database: 'file.sqlite', logLevel: 'debug', pageSize: 20, retry: { maxAttempts: 2 } });
    const env = { WSMIRROR_DATABASE: 'env.sqlite', WSMIRROR_LOG_LEVEL: 'warn' };
    const { config } = loadConfig({ cwd, env, flags: { logLevel: 'error' } });
    expect(config.database).toBe('env.sqlite');
    expect(config.logLevel).toBe('error');
    expect(config.pageSize).toBe(20);
    expect(config.retry).toEqual({ maxAttempts: 2, maxDelayMs: 60_000 });
  });

  it('reports every problem at once, naming key, value and what is allowed', () => {
    const cwd = dirWith({ pageSize: 500, schedule: 'every minute', bogus: 1, http: { port: 'x' } });
    let error: unknown;
    try {
      loadConfig({ cwd, env: { WSMIRROR_BASE_URL: 'ftp://nope' } });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ExitError);
    const exit = error as ExitError;
    expect(exit.exitCode).toBe(2);
    expect(exit.message).toContain('pageSize: got 500');
    expect(exit.message).toContain('at most 100');
    expect(exit.message).toContain('schedule: got "every minute"');
    expect(exit.message).toContain('"bogus"');
    expect(exit.message).toContain('http.port: got "x"');
    expect(exit.message).toContain('baseUrl: got "ftp://nope" (from the environment)');
  });

  it('never echoes the API key and warns when it is kept in a file', () => {
    const cwd = dirWith({ apiKey: 'sekrit-file-key', baseUrl: 'http://127.0.0.1:1' });
    const { config, warnings } = loadConfig({ cwd, env: {} });
    expect(config.apiKey).toBe('sekrit-file-key');
    expect(warnings.join(' ')).toContain('WSMIRROR_API_KEY');
    expect(warnings.join(' ')).not.toContain('sekrit');
  });

  it('names a missing upstream setting and how to set it', () => {
    const { config } = loadConfig({ cwd: dirWith(), env: {} });
    expect(() => requireUpstream(config)).toThrow(/WSMIRROR_BASE_URL.*WSMIRROR_API_KEY/);
  });

  it('rejects a config file that is not JSON with a pointer to the example', () => {
    const cwd = dirWith();
    writeFileSync(join(cwd, 'bad.json'), '{ nope');
    expect(() => loadConfig({ cwd, env: {}, flags: { config: 'bad.json' } })).toThrow(/not valid JSON.*config.example.json/);
  });
});
