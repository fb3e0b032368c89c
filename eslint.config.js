// ESLint: a small, type-aware rule set for what the type checker cannot see: promises left
// floating, the domain below HTTP, where the environment is read, import cycles, `.only` left in a
// test. `npm run lint` runs the type check (TypeScript 7), then this.
//
// typescript-eslint reads types through the JavaScript API of TypeScript 6 (the `typescript`
// package in package.json is an alias of @typescript/typescript6), while `tsc` is TypeScript 7
// (@typescript/native). TypeScript 7 has no JavaScript compiler API yet.
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const testOnly = [
  {
    selector:
      "CallExpression[callee.type='MemberExpression'][callee.object.name=/^(test|it|describe|suite)$/][callee.property.name='only']",
    message: '.only left in a test: the rest of the file would not run.',
  },
  {
    selector: "Property[key.name='only'][value.value=true]",
    message: '{ only: true } left in a test: the rest of the file would not run.',
  },
];

// Relative imports that leave src/<dir>/ for src/http/ (every file under src/ reaches it with ../).
const httpLayer = {
  regex: '^(\\.\\./)+http/',
  message: 'The domain stays below HTTP: src/modules, src/registry and src/lib never import src/http (throw a domain error instead).',
};
const processEnv = [
  { name: 'node:process', importNames: ['env'], message: 'Only src/config.ts reads the environment.' },
  { name: 'process', importNames: ['env'], message: 'Only src/config.ts reads the environment.' },
];
const testOrBench = {
  regex: '^(\\.\\./)+(test|bench)/',
  message: 'src/ never imports from test/ or bench/.',
};

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '.data/**',
      'data/**',
      'bin/**',
      'scripts/ci-db.mjs',
      'eslint.config.js',
      'packages/*/dist/**',
      'packages/*/build.mjs',
      'packages/*/src/generated/**',
    ],
  },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { '@typescript-eslint': tseslint.plugin, 'import-x': importX },
    settings: {
      // Imports name their .ts files, so Node's resolution finds them; import-x must be told that
      // .ts files are modules it can parse, or it skips them and sees no cycle at all.
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js'] })],
    },
    rules: {
      // node:test's test() and describe() return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] }] },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { args: 'after-used', argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports', fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-explicit-any': 'error',
      eqeqeq: ['error', 'always'],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'no-restricted-syntax': ['error', ...testOnly],
    },
  },
  {
    // Configuration is read once, in src/config.ts, and passed in (docs/configuration.md).
    files: ['src/**/*.ts'],
    ignores: ['src/config.ts', 'src/cli.ts', 'src/**/*.test.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message: 'Only src/config.ts (and the CLI entry) read process.env: add the variable there and pass config in.',
        },
      ],
      'no-restricted-imports': ['error', { paths: processEnv, patterns: [testOrBench] }],
    },
  },
  {
    // The domain below HTTP. A module's HTTP adapters (its routes, route schemas and plugin) may
    // use src/http; its services, repositories and jobs may not.
    files: ['src/modules/**/*.ts', 'src/registry/**/*.ts', 'src/lib/**/*.ts'],
    ignores: [
      'src/**/*.test.ts',
      'src/modules/*/routes.ts',
      'src/modules/*/*-routes.ts',
      'src/modules/*/schema.ts',
      'src/modules/*/plugin.ts',
    ],
    rules: {
      'no-restricted-imports': ['error', { paths: processEnv, patterns: [testOrBench, httpLayer] }],
    },
  },
);
