import { SIMULATOR_DIALECTS } from '../../src/simulator/index.js';

/**
 * The upstream dialects (simulator presets, docs/simulator.md "Dialects") a suite that loops over
 * them runs under: `WSMIRROR_TEST_DIALECTS` names them (comma-separated, or `all`); otherwise the
 * one preset `WSMIRROR_SIMULATOR_DIALECT` names, which every simulator a test starts without its
 * own `dialect` speaks too (in process and spawned alike), else `default`. An unknown name throws,
 * so a typo never runs a matrix under the default dialect.
 */
export function upstreamDialects(env: NodeJS.ProcessEnv = process.env): string[] {
  const list = env.WSMIRROR_TEST_DIALECTS;
  const names =
    list === 'all'
      ? Object.keys(SIMULATOR_DIALECTS)
      : list
        ? list.split(',').map((n) => n.trim())
        : [env.WSMIRROR_SIMULATOR_DIALECT || 'default'];
  for (const n of names)
    if (!Object.prototype.hasOwnProperty.call(SIMULATOR_DIALECTS, n))
      throw new Error(`no simulator dialect is called ${JSON.stringify(n)}; presets are ${Object.keys(SIMULATOR_DIALECTS).join(', ')}`);
  return names;
}
