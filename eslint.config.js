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
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
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
              group: ['../activities/*', '../activities/**', '../db/**', '../server/**'],
              allowTypeImports: true,
              message: 'Workflow code may only `import type` from activities.',
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'setTimeout', 'setInterval', 'fetch', 'process'],
    },
  },
);
