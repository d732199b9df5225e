// Lint: typescript-eslint's strict, type-checked rules over every TypeScript file the typecheck
// covers. A rule relaxed or switched off below says why; everything else is an error.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/**', 'bench/peers/jazz/**', 'node_modules/**', 'test-results/**', 'server/client/api-types.ts', '**/*.js', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // Casts are written one way; an object literal may be asserted only where it is passed on
      // (a literal asserted into a variable hides a missing field the annotation would catch).
      '@typescript-eslint/consistent-type-assertions': ['error', { assertionStyle: 'as', objectLiteralTypeAssertions: 'allow-as-parameter' }],
      // Numbers, booleans and absent values print as a reader expects in a message or a key.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true, allowNullish: true }],
      // Keys and labels are built as `prefix + n`.
      '@typescript-eslint/restrict-plus-operands': ['error', { allowNumberAndString: true }],
      // Y.Text's toString is its content.
      '@typescript-eslint/no-base-to-string': ['error', { ignoredTypeNames: ['Error', 'RegExp', 'URL', 'URLSearchParams', 'YText'] }],
      // `() => void x()` shorthand callbacks are the house style for listeners.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // `_` marks a parameter an interface requires and this implementation does not read.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Values decoded from peers, disks and HTTP bodies are typed as what they should be; the
      // checks this rule calls unnecessary are the ones that refuse what they are not.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      // For the same reason `x === true` is kept where x is typed boolean: it is the check that a
      // decoded value is the boolean true and not some other truthy value a peer sent. (This
      // rule's autofix once turned `flags.id !== false` into `flags.id`, dropping an absent key.)
      '@typescript-eslint/no-unnecessary-boolean-literal-compare': 'off',
      // String(x) and Number(x) on a value typed string or number normalise what was decoded.
      '@typescript-eslint/no-unnecessary-type-conversion': 'off',
      '@typescript-eslint/no-unnecessary-template-expression': 'off',
      // Adapters and modules implement async interfaces; an implementation that happens to be
      // synchronous still returns a promise, so callers never depend on which one they got.
      '@typescript-eslint/require-await': 'off',
      // `map.get(k)!` right after the same function set or checked `k` (noUncheckedIndexedAccess
      // is off, so indexing is not flagged either): the rule cannot see the check.
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Records are JSON maps keyed by data (a property id, a dataset name): deleting a key by
      // name is the operation, not a sign of a misused object.
      '@typescript-eslint/no-dynamic-delete': 'off',
    },
  },
  {
    // The CLI prints the JSON answers of the API it calls; their shape is the API's schema, and
    // the typed calls go through openapi-fetch. Reading a field to print it needs no cast.
    files: ['server/cli/**'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // Tests and benchmarks read JSON answers and fixtures whose shape the assertions check, and
    // poke at internals on purpose: the unsafe-any rules would only add casts there.
    files: ['test/**', 'bench/**'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
      '@typescript-eslint/no-confusing-void-expression': 'off',
      '@typescript-eslint/restrict-plus-operands': 'off',
      // Tests take methods off fakes and spies on purpose, and reject with what IndexedDB and
      // fake transports hand them.
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/prefer-promise-reject-errors': 'off',
      // Tests craft partial and malformed values on purpose (a change without a field, a body a
      // client should not send), and build records by path.
      '@typescript-eslint/consistent-type-assertions': ['error', { assertionStyle: 'as', objectLiteralTypeAssertions: 'allow' }],
      '@typescript-eslint/no-dynamic-delete': 'off',
      // Helpers take the answer type from the caller, as `res.json<T>()` does.
      '@typescript-eslint/no-unnecessary-type-parameters': 'off',
      // Test servers, workers and fakes are async listeners; a failure in one fails its test.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
    },
  },
)
