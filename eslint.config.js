// Lint configuration (`npm run lint`, part of `npm test`). TypeScript is linted with type
// information from tsconfig.json (typescript-eslint's recommended-type-checked); formatting is
// Prettier's alone (.prettierrc.json), and neither recommended set enables a stylistic rule.
// Every rule relaxed below says why on its line.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'coverage/', 'data/', 'node_modules/', '.vitest-tmp/'] },
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        // Every .ts file is in tsconfig.json's `include`; the project service reads it from there.
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Rejecting with an AbortSignal's `reason` (typed any) forwards the caller's own abort error, as `throw signal.reason` does under only-throw-error's defaults.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // The code's convention: `_name` is unused on purpose (a loop that only counts), and destructuring a key away keeps the rest.
      '@typescript-eslint/no-unused-vars': ['error', { varsIgnorePattern: '^_', argsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  // The store's surface (docs/design.md §5.1): outside src/store, code imports the
  // store from store/index.js and asks it named questions. Two narrow doors stay open, each to the one
  // place that needs it: store/internal.js (the query builder) to src/report, which builds the rpt_
  // tables in SQL over the whole mirror, and store/sync-state.js (raw sync_state) to src/sync/state.ts,
  // which declares every key's shape. Tests and bench/ may use both.
  {
    files: ['src/**/*.ts'],
    ignores: ['src/store/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [storeOnlyThroughIndex()] }] },
  },
  {
    files: ['src/report/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [storeOnlyThroughIndex('internal.js', 'dialect.js')] }] },
  },
  {
    files: ['src/sync/state.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [storeOnlyThroughIndex('sync-state.js')] }] },
  },
  {
    // Kysely's migration guide: a migration takes Kysely<any>, frozen apart from the live table types.
    files: ['migrations/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Tests read wire bodies and SQL rows as untyped JSON on purpose (they check the shape, so typing it first would assume the result); expect() is their check. Declaring `any` stays flagged.
    files: ['test/**/*.ts', '**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // bin/, scripts/ and this file are plain JavaScript outside tsconfig.json: no type information.
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },
);

/** A no-restricted-imports pattern: src/store's modules other than index.js (and `allowed`) are off limits. */
function storeOnlyThroughIndex(...allowed) {
  return {
    regex: `(^|/)store/(?!(${['index.js', ...allowed].map((f) => f.replace('.', '\\.')).join('|')})$)[^/]+$`,
    message:
      'Import the store from store/index.js and ask it a named question (add one in src/store if none fits); only src/report may use store/internal.js and only src/sync/state.ts store/sync-state.js (docs/design.md §5.1).',
  };
}
