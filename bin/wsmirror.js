#!/usr/bin/env node
// The compiled CLI lives in dist/ (built by `npm run build`, which `npm ci` runs through `prepare`).
import('../dist/src/cli/main.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/src/cli/main.js')) {
    process.stderr.write('wsmirror is not built yet: run `npm run build` (or `npm ci`) in the wsmirror folder, then try again.\n');
    process.exit(1);
  }
  throw err;
});
