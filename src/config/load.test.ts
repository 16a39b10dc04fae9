import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
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
    expect(config.http).toEqual({ host: '127.0.0.1', port: 9464 });
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

  it('rejects unknown keys inside http and retry like top-level ones, with a "did you mean"', () => {
    const cwd = dirWith({ http: { prot: 9000 }, retry: { maxAttempt: 3 }, maxResponseByte: 1, pagesize: 5 });
    let error: unknown;
    try {
      loadConfig({ cwd, env: {} });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ExitError);
    const message = (error as ExitError).message;
    expect((error as ExitError).exitCode).toBe(2);
    expect(message).toContain('"http.prot" (did you mean "http.port"?)');
    expect(message).toContain('"retry.maxAttempt" (did you mean "retry.maxAttempts"?)');
    expect(message).toContain('"maxResponseByte" (did you mean "maxResponseBytes"?)');
    expect(message).toContain('"pagesize" (did you mean "pageSize"?)');
  });

  it('maxResponseBytes and stallTimeoutMs default to 32 MiB and 10 minutes and are range-checked', () => {
    expect(loadConfig({ cwd: dirWith(), env: {} }).config.maxResponseBytes).toBe(33_554_432);
    expect(loadConfig({ cwd: dirWith(), env: {} }).config.stallTimeoutMs).toBe(600_000);
    expect(() => loadConfig({ cwd: dirWith({ maxResponseBytes: 10 }), env: {} })).toThrow(/maxResponseBytes: got 10.*at least 1024/);
  });

  it('http.authToken comes from WSMIRROR_HTTP_AUTH_TOKEN, and an invalid one is never repeated in the error', () => {
    const token = 'a-token-of-24-characters';
    expect(loadConfig({ cwd: dirWith(), env: { WSMIRROR_HTTP_AUTH_TOKEN: token } }).config.http).toEqual({
      host: '127.0.0.1',
      port: 9464,
      authToken: token,
    });
    expect(loadConfig({ cwd: dirWith(), env: {} }).config.http.authToken).toBeUndefined();
    let error: unknown;
    try {
      loadConfig({ cwd: dirWith({ http: { authToken: 'short-secret' } }), env: {} });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ExitError);
    expect((error as Error).message).toMatch(/http\.authToken: got \(hidden\).*must be at least 16/);
    expect((error as Error).message).not.toContain('short-secret');
  });

  it('config.example.json documents every key and loads as it is', () => {
    const example = JSON.parse(readFileSync(new URL('../../config.example.json', import.meta.url), 'utf8')) as Record<string, unknown>;
    const cwd = dirWith(example);
    const { config } = loadConfig({ cwd, env: {} });
    for (const key of Object.keys(config)) if (key !== 'apiKey') expect(Object.keys(example)).toContain(key);
  });
});
