import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEPLOY, nonLoopback, readJson, readYaml, strings, type Doc } from './read.js';

const [compose] = readYaml(join(DEPLOY, 'compose.yaml')) as [Doc];
const services = compose.services as Record<string, Doc>;
const fleet = readJson(join(DEPLOY, 'fleet.json'));
const simulatorFile = readJson(join(DEPLOY, 'simulator-workspaces.json'));

/** The whole command line of a service, entrypoint and command, as one string. */
const commandLine = (s: Doc): string => [s.entrypoint ?? [], s.command ?? []].flat().join(' ');
const workers = Object.entries(services).filter(([, s]) => /\bfleet worker\b/.test(commandLine(s)));
const flag = (s: Doc, name: string): string | undefined => {
  const args = [s.command ?? []].flat() as string[];
  const i = args.indexOf(name);
  return i < 0 ? undefined : args[i + 1];
};
/** The HTTP port a worker serves on: its --http-port, else the fleet file's. */
const workerPort = (s: Doc): number => Number(flag(s, '--http-port') ?? fleet.worker.http.port);

describe('deploy/compose.yaml', () => {
  it('has PostgreSQL, the simulator, a migration step and at least two fleet workers, each with an image', () => {
    expect(Object.keys(services)).toEqual(expect.arrayContaining(['postgres', 'simulator', 'migrate']));
    expect(workers.length).toBeGreaterThanOrEqual(2);
    // An image reference, or a variable with one as its default.
    for (const [name, s] of Object.entries(services)) expect(s.image, `${name}.image`).toMatch(/^(\$\{\w+:-)?[a-z0-9./_-]+:[\w.-]+\}?$/);
    expect(commandLine(services.migrate)).toMatch(/^fleet apply --config \/etc\/wsmirror\/fleet\.json$/);
    expect(commandLine(services.simulator)).toContain('simulate');
    for (const [name, s] of workers) {
      expect(commandLine(s), name).toMatch(/^fleet worker --config \/etc\/wsmirror\/fleet\.json --concurrency \d+( --http-port \d+)?$/);
      // The image's own entrypoint runs wsmirror; no shell in between to forward signals.
      expect(s.entrypoint, `${name}.entrypoint`).toBeUndefined();
    }
  });

  it('uses host networking everywhere: no bridge network, no published port', () => {
    expect(compose.networks).toBeUndefined();
    for (const [name, s] of Object.entries(services)) {
      expect(s.network_mode, `${name}.network_mode`).toBe('host');
      expect(s.networks, `${name}.networks`).toBeUndefined();
      expect(s.ports, `${name}.ports`).toBeUndefined();
    }
  });

  it('names no address but loopback, in the compose file, the fleet file or the simulator file', () => {
    const found = [compose, fleet, simulatorFile].flatMap((doc) =>
      strings(doc).flatMap(({ at, value }) => nonLoopback(value).map((a) => `${at}: ${a}`)),
    );
    expect(found).toEqual([]);
    expect(JSON.stringify(compose)).not.toContain('0.0.0.0');
    expect(fleet.worker.http.host).toBe('127.0.0.1');
    expect(flag(services.simulator, '--host')).toBe('127.0.0.1');
    expect(commandLine(services.postgres)).toContain('listen_addresses=127.0.0.1');
    // The image listens on every interface unless told otherwise.
    for (const [name, s] of workers) expect(s.environment?.WSMIRROR_HTTP_HOST, name).toBe('127.0.0.1');
  });

  it('gives every long-running service a healthcheck and every worker its own port', () => {
    for (const [name, s] of Object.entries(services)) {
      if (s.restart === 'no') continue;
      expect(s.healthcheck?.disable, `${name}.healthcheck`).not.toBe(true);
      expect(s.healthcheck?.test, `${name}.healthcheck.test`).toBeDefined();
    }
    const ports = workers.map(([, s]) => workerPort(s));
    expect(new Set(ports).size).toBe(workers.length);
    for (const [name, s] of workers) expect(s.healthcheck.test.join(' '), name).toContain(`127.0.0.1:${workerPort(s)}/healthz`);
  });

  it('starts in order: the migration after PostgreSQL is healthy, the workers after the migration and the simulator', () => {
    expect(services.migrate.depends_on.postgres.condition).toBe('service_healthy');
    for (const [name, s] of workers) {
      expect(s.depends_on.migrate.condition, name).toBe('service_completed_successfully');
      expect(s.depends_on.simulator.condition, name).toBe('service_healthy');
    }
    for (const [name, s] of Object.entries(services))
      for (const dep of Object.keys(s.depends_on ?? {})) expect(services[dep], `${name} depends on ${dep}`).toBeDefined();
  });

  it('points the fleet file at the compose PostgreSQL, without its password', () => {
    const url = new URL(fleet.database);
    expect(url.password).toBe('');
    expect(url.port).toBe(/port=(\d+)/.exec(commandLine(services.postgres))?.[1]);
    expect(decodeURIComponent(url.username)).toBe(services.postgres.environment.POSTGRES_USER);
    expect(url.pathname.slice(1)).toBe(services.postgres.environment.POSTGRES_DB);
    for (const [name, s] of [...workers, ['migrate', services.migrate] as const])
      expect(s.environment.PGPASSWORD, `${name}: PGPASSWORD`).toMatch(/^\$\{WSMIRROR_PG_PASSWORD:\?/);
  });

  it("mirrors the simulator's workspaces, each key a mounted secret file that the simulator accepts", () => {
    const port = flag(services.simulator, '--port');
    const served = new Map<string, string>(simulatorFile.workspaces.map((w: Doc) => [w.id, w.apiKey]));
    expect(fleet.workspaces.map((w: Doc) => w.id).sort()).toEqual([...served.keys()].sort());
    for (const ws of fleet.workspaces) {
      expect(ws.baseUrl).toBe(`http://127.0.0.1:${port}/w/${ws.id}`);
      const secret = /^\/run\/secrets\/([\w-]+)$/.exec(ws.apiKeyFile)?.[1] as string;
      expect(secret, `${ws.id}.apiKeyFile`).toBeDefined();
      for (const [name, s] of workers) expect(s.secrets, `${name}.secrets`).toContain(secret);
      const file = join(DEPLOY, compose.secrets[secret].file);
      expect(existsSync(file), file).toBe(true);
      expect(readFileSync(file, 'utf8').trim()).toBe(served.get(ws.id));
    }
  });
});
