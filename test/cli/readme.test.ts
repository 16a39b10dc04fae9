import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { BIN, REPO } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { useSimulator } from './env.js';
import { freePort, poll } from './ops-helpers.js';

/** One ```sh block of the README: where it starts and its text, as written. */
interface Block {
  line: number;
  text: string;
}

function shellBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash|shell)\s*$/.test(lines[i]!)) continue;
    const start = i + 1;
    while (i + 1 < lines.length && !lines[i + 1]!.startsWith('```')) i++;
    blocks.push({ line: start, text: lines.slice(start, i + 1).join('\n') });
    i++;
  }
  return blocks;
}

/**
 * The only rewrites of the README's commands: `npx wsmirror` is this checkout's bin (what npx
 * resolves inside the package, without asking a registry), and the placeholders of the workspace
 * (`https://acme.example.com`, the key `...`) are the simulator the test started.
 */
function asRun(text: string, upstream?: { url: string; key: string }): string {
  let script = text.replaceAll('npx wsmirror', `node ${JSON.stringify(BIN)}`);
  if (upstream)
    script = script
      .replaceAll('https://acme.example.com', upstream.url)
      .replace(/WSMIRROR_API_KEY=\.\.\./g, `WSMIRROR_API_KEY=${upstream.key}`);
  return script;
}

/** Lines a test cannot run as written, each with the reason and where it is covered instead. */
const NOT_RUN: Array<[RegExp, string]> = [
  [/^npm ci$/, 'installs the dependencies: this test runs in an installed checkout'],
  [/^npm test$/, 'the quick selection of the suite this test belongs to'],
  [/^npm run test:all$/, 'the whole suite this test belongs to (CI runs it)'],
  [/^docker (build|run)\b/, 'needs a docker daemon: `npm run container:check` builds and runs the image'],
];

function runnable(text: string): string {
  const kept: string[] = [];
  for (const command of text.replace(/\\\n\s*/g, '').split('\n')) {
    if (!NOT_RUN.some(([pattern]) => pattern.test(command.trim()))) kept.push(command);
  }
  return kept.join('\n').trim();
}

function bash(script: string, cwd: string, env: Record<string, string>) {
  const child = spawn('bash', ['--norc', '--noprofile', '-eo', 'pipefail', '-c', script], {
    cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    detached: true,
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const result = new Promise<{ code: number | null; out: string }>((resolve) => child.on('close', (code) => resolve({ code, out })));
  return { child, result, output: () => out };
}

function syncedOnce(file: string): boolean {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(`select 1 from sync_runs where kind = 'sync' and outcome = 'success'`).get() !== undefined;
  } finally {
    db.close();
  }
}

/**
 * Issue 46: the README's shell blocks executed as written, in order, with the real CLI: the demo
 * and its exploration, then "Point it at a real workspace" against a simulator this test starts.
 * A block no rule here knows fails the test, so a new example in the README gets run too.
 */
describe('the README, as written', () => {
  const sim = useSimulator({ seed: 7, tickets: 15, deals: 6 });
  const blocks = shellBlocks(readFileSync(join(REPO, 'README.md'), 'utf8'));

  it('knows every shell block of the README', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    for (const b of blocks) {
      const script = runnable(b.text);
      const known = script === '' || /npm run demo|sqlite3 -readonly data\/demo\.sqlite|export WSMIRROR_BASE_URL/.test(script);
      expect(known, `README line ${b.line}: no rule in test/cli/readme.test.ts runs this block:\n${b.text}`).toBe(true);
    }
  });

  it('runs the demo, then explores its mirror', async () => {
    const demo = blocks.find((b) => b.text.includes('npm run demo'))!;
    const ran = await bash(asRun(runnable(demo.text)), REPO, {}).result;
    expect(ran.code, ran.out).toBe(0);
    expect(ran.out).toMatch(/Explore the mirror with/);

    const explore = blocks.find((b) => b.text.includes('sqlite3 -readonly data/demo.sqlite'))!;
    const looked = await bash(asRun(runnable(explore.text)), REPO, {}).result;
    expect(looked.code, looked.out).toBe(0);
    expect(looked.out).toMatch(/^(new|open|pending|on_hold|solved|closed)\|\d+$/m);
    expect(looked.out).toMatch(/Watermark:\s+\d{4}-/);
  }, 180_000);

  it('points `run` at a workspace with the exports as written, and it backfills then syncs', async () => {
    const block = blocks.find((b) => b.text.includes('export WSMIRROR_BASE_URL'))!;
    const { dir, cleanup } = tempDir();
    // A port of its own: the README's default 9464 may be taken on a shared machine (docs/operations.md).
    const port = await freePort();
    const run = bash(asRun(runnable(block.text), { url: sim.url, key: 'test-key' }), dir, { WSMIRROR_HTTP_PORT: String(port) });
    try {
      const file = join(dir, 'data', 'mirror.sqlite');
      // Keyed to a committed row: the first sync after the backfill finished.
      await poll(() => Promise.resolve().then(() => syncedOnce(file)), 60_000);
      const db = new Database(file, { readonly: true });
      const tickets = (db.prepare('select count(*) as n from tickets where deleted_at is null').get() as { n: number }).n;
      db.close();
      expect(tickets).toBe(sim.control.truth().tickets.length);
      const page = await fetch(`http://127.0.0.1:${port}/`);
      expect(page.status).toBe(200);
    } finally {
      process.kill(-run.child.pid!, 'SIGTERM');
      const end = await run.result;
      expect(end.code, end.out).toBe(0);
      cleanup();
    }
  }, 120_000);
});
