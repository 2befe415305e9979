import { defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config.js";

// The same suite against build/crawlsieve.debug.wasm: `npm run test:debug` (all files) or
// `npm run test:debug:kernels` (the suites that exercise kernels in this process; what CI runs).
export default mergeConfig(base, defineConfig({ test: { setupFiles: ["./test/support/debug-build.ts"] } }));
