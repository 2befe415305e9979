// Setup file of `npm run test:debug` (vitest.debug.config.ts): installs the debug build (AssemblyScript
// assertions on, unoptimised) before a test file loads, so the package's own init() finds a module
// already installed and keeps it (init is idempotent), and every structure's instance is a debug
// one. Instances come from @assemblyscript/loader, whose env.abort turns a failed kernel assertion
// into a thrown Error naming the file and line. Tests that start their own Node process (CLI,
// workers) still run the release build there.
import * as loader from "@assemblyscript/loader";
import { readFileSync } from "node:fs";
import { setInstantiator, setModule } from "../../build/js/wasm/module.js";

setModule(new WebAssembly.Module(readFileSync(new URL("../../build/crawlsieve.debug.wasm", import.meta.url))));
setInstantiator((module) => loader.instantiateSync(module, {}).exports as unknown as WebAssembly.Exports);
