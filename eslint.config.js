// ESLint (flat config) for the web client: native ES modules in services/gateway/static/js, run in
// the browser as they are (no build step). tests/unit/test_js_lint.py runs it in `make test`.
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["node_modules/**", ".venv/**", ".tools/**", ".lc-data/**"] },
  js.configs.recommended,
  {
    files: ["services/gateway/static/**/*.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: { ...globals.browser } },
    rules: {
      "no-undef": "error",
    },
  },
  {
    files: ["eslint.config.js"],
    languageOptions: { sourceType: "module", globals: { ...globals.node } },
  },
];
