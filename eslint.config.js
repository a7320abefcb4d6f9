// ESLint with type information (typescript-eslint): `npm test` runs it before the tests.
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', '.data/', 'bench/results/', 'deploy/rehearsal/results/', 'coverage/', 'dist/', 'web/dist/', 'scratch/', 'web/src/lib/api-types.gen.ts'] },
  js.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    extends: [tseslint.configs.recommended],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // A promise nobody awaits loses its error and its order; one passed where a callback returns nothing too.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
    },
  },
  {
    // The console: hooks called in order, with the dependencies they read.
    files: ['web/src/**/*.{ts,tsx}'],
    extends: [reactHooks.configs.flat.recommended],
  },
  {
    // Tests and the benchmark read JSON answers as they come.
    files: ['test/**/*.ts', 'bench/**/*.ts', 'deploy/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Workflows run in Temporal's deterministic sandbox: no Node built-ins, no I/O, activities by type only.
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^node:', message: 'Workflows run in a sandbox without Node built-ins; do I/O in an activity.' },
            { regex: '^\\.\\./activities', allowTypeImports: true, message: 'Workflows call activities through proxyActivities; import their types only.' },
            { regex: '^(pg|fs|path|crypto|http|https|net|child_process|fastify|@temporalio/(client|worker|activity))$', message: 'Not in the workflow sandbox.' },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', Buffer: 'readonly' } },
  },
);
