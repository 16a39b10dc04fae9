import { describe, expect, it } from 'vitest';
import { runCli, spawnCli, waitForOutput } from '../helpers/cli.js';
import { dialects } from '../helpers/dialects.js';
import { tempDir } from '../helpers/tmp.js';
import { cliConfig, useSimulator } from '../cli/env.js';
import { freePort } from '../cli/ops-helpers.js';

const TOKEN = 'tok-3f9a1c7e5b2d4a6f8e0c';
/** Every endpoint the gate must cover, `/wait` included: a path added later is behind the gate without being listed. */
const GUARDED = ['/', '/status.json', '/metrics', '/readyz', '/wait'];

describe.each(dialects)('the http server with http.authToken ($name)', (dialect) => {
  const sim = useSimulator({ seed: 8, tickets: 40, deals: 10 });

  it('answers 401 without the token or with a wrong one, except /healthz; the right one works; it is never logged', async () => {
    const { dir, cleanup } = tempDir();
    const target = await dialect.newDatabase();
    const port = await freePort();
    const env = {
      ...cliConfig(dir, { url: sim.url, database: target.database }),
      WSMIRROR_LOG_LEVEL: 'trace',
      WSMIRROR_HTTP_PORT: String(port),
      WSMIRROR_HTTP_AUTH_TOKEN: TOKEN,
    };
    const daemon = spawnCli(['run'], env);
    let log = '';
    daemon.stderr.on('data', (d: Buffer) => (log += d.toString()));
    try {
      await waitForOutput(daemon, /"msg":"sync cycle"/);
      const base = `http://127.0.0.1:${port}`;
      const get = (path: string, authorization?: string, method = 'GET') =>
        fetch(`${base}${path}`, { method, headers: authorization === undefined ? {} : { authorization } });
      const wrong = [
        undefined,
        'Bearer',
        `Bearer ${TOKEN.slice(0, -1)}x`,
        `Bearer ${TOKEN}0`,
        `Basic ${TOKEN}`,
        TOKEN,
        `Bearer ${TOKEN} extra`,
      ];
      for (const path of GUARDED) {
        for (const authorization of wrong) {
          const res = await get(path, authorization);
          expect(res.status, `${path} with ${authorization ?? 'no header'}`).toBe(401);
          expect(res.headers.get('www-authenticate')).toBe('Bearer realm="wsmirror"');
        }
      }
      expect((await get('/healthz')).status).toBe(200);
      const right = `Bearer ${TOKEN}`;
      const page = await get('/', right);
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toMatch(/<div id="state" class="(idle|syncing)">/);
      expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
      expect((await get('/status.json', right)).status).toBe(200);
      expect(await (await get('/metrics', right)).text()).toMatch(/^wsmirror_is_writer 1$/m);
      expect((await get('/readyz', `bearer  ${TOKEN}`)).status).toBe(200);
      // Past the gate, /wait answers whatever it answers (404 while it does not exist), never 401.
      expect((await get('/wait', right)).status).not.toBe(401);
      // Read-only: no other method, whatever the token.
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
        const res = await get('/', right, method);
        expect(res.status).toBe(405);
        expect(res.headers.get('allow')).toBe('GET, HEAD');
      }
      const head = await get('/', right, 'HEAD');
      expect(head.status).toBe(200);
      expect(await head.text()).toBe('');

      // `wsmirror status` reaches the daemon with the token from its own config and prints the page's state line.
      const status = await runCli(['status'], env);
      expect(status.code, status.stderr).toBe(0);
      const line = /^State: {7}(.*) \(from the daemon: writer, up /m.exec(status.stdout)?.[1];
      expect(line).toMatch(/^(Idle|Syncing): /);
      const json = (await runCli(['status', '--json'], env)).stdout;
      expect(JSON.parse(json)).toMatchObject({ live: { source: 'daemon', role: 'writer' } });
      // Without the token the daemon does not answer it, and the line comes from the mirror's tables.
      const blind = await runCli(['status'], { ...env, WSMIRROR_HTTP_AUTH_TOKEN: undefined });
      expect(blind.stdout).toMatch(/^State: {7}.* \(from the mirror's tables: no daemon answered/m);
      for (const text of [html, json, status.stdout]) {
        expect(text).not.toContain(TOKEN);
        expect(text).not.toContain('test-key');
      }
    } finally {
      daemon.kill('SIGTERM');
      await daemon.result;
      await target.drop();
      cleanup();
    }
    expect(log).toMatch(/"authToken":"required"/);
    expect(log).toMatch(/"msg":"upstream request"/); // trace level: every line was written
    expect(log).not.toContain(TOKEN);
  });
});
