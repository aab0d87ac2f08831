import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'node:*',
  'fs',
  'path',
  'http',
  'https',
  'net',
  'crypto',
  'child_process',
  'os',
  'events',
  'stream',
  'url',
  'util',
  'worker_threads',
];

export default tseslint.config(
  { ignores: ['node_modules/**', '.data/**', 'coverage/**'] },
  ...tseslint.configs.recommended,
  {
    plugins: { 'import-x': importX },
    settings: { ...importX.flatConfigs.typescript.settings, 'import-x/resolver-next': [createTypeScriptImportResolver()] },
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test runs describe/it itself; their promises are not for the caller to await.
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] }] },
      ],
      '@typescript-eslint/await-thenable': 'error',
      // Folders form layers (docs/architecture.md): no module may reach itself again through its imports,
      // type-only imports included.
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // The mission's contract is contracts/ (a floor below): the layers under wiring/ never reach up into workflow code.
      // The worker names the workflows' folder only as a path string for the bundle.
      // Tests and benchmarks share their stack through testkit/: neither imports the other, nor testkit/ either.
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            {
              target: [
                './activities',
                './admission',
                './missions',
                './schedules',
                './webhooks',
                './server',
                './worker',
                './events',
                './db',
                './notify',
                './temporal',
              ],
              from: './workflows',
              message: 'Import the mission contract from contracts/, never from workflows/.',
            },
            {
              target: ['./activities', './db', './notify', './model', './config', './lib', './contracts'],
              from: './events',
              message: 'events/ (the stream: sinks, wire, relay, SSE) sits above these; they meet it through contracts/events.ts.',
            },
            { target: './bench', from: './test', message: 'bench/ takes shared helpers from testkit/, never from test/.' },
            { target: './test', from: './bench', message: 'test/ takes shared helpers from testkit/, never from bench/.' },
            { target: './testkit', from: ['./test', './bench'], message: 'testkit/ is below test/ and bench/.' },
          ],
        },
      ],
    },
  },
  { files: ['eslint.config.js'], ...tseslint.configs.disableTypeChecked },
  // The console is plain browser modules served as they are (console/): no type information to lint them with.
  { files: ['console/**/*.js'], ...tseslint.configs.disableTypeChecked },
  {
    // Migrations are self-contained and typed against Kysely<any>, as Kysely's docs advise.
    files: ['db/migrations/**/*.ts', 'db/migrator.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Workflow code is replayed: it may import only @temporalio/workflow, sibling workflow modules and types.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: nodeBuiltins, message: 'Workflow code must not use Node built-ins (not deterministic).' },
            {
              group: [
                'pg',
                'kysely',
                'express',
                '@temporalio/client',
                '@temporalio/worker',
                '@temporalio/activity',
                'openai',
                '@anthropic-ai/*',
                '@electric-sql/*',
              ],
              message: 'Workflow code must not do I/O: call an activity instead.',
            },
            {
              // Everything outside workflows/ but the pure contracts: types only.
              group: ['../*', '../**', '!../contracts', '!../contracts/*'],
              allowTypeImports: true,
              message: 'Workflow code may import values only from workflows/ and contracts/; from elsewhere, only `import type`.',
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'setTimeout', 'setInterval', 'fetch', 'process'],
    },
  },
);
