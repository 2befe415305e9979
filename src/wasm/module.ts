// Holds the compiled WebAssembly.Module: compiled once per process by the runtime's entry file
// (Node reads the file, browsers fetch it, workers import it), instantiated once per structure.
import { NotInitializedError } from "../errors.js";
import type { Kernels } from "./kernels.js";

let compiled: WebAssembly.Module | undefined;
let pending: Promise<void> | undefined;

/** Installs the compiled module; later calls are ignored so init stays idempotent. */
export function setModule(module: WebAssembly.Module): void {
  if (compiled === undefined) compiled = module;
}

/** True once a module is installed. */
export function isInitialized(): boolean {
  return compiled !== undefined;
}

/** Runs `load` once, sharing the promise among concurrent callers of init(). */
export function initOnce(load: () => Promise<WebAssembly.Module>): Promise<void> {
  if (compiled !== undefined) return Promise.resolve();
  pending ??= load().then(setModule, (error: unknown) => {
    pending = undefined;
    throw error;
  });
  return pending;
}

/** Makes the exports of one instance of the module. */
export type Instantiator = (module: WebAssembly.Module) => WebAssembly.Exports;

// The release build imports nothing; a debug build imports env.abort, which tests supply
// through a custom instantiator (for example @assemblyscript/loader's, which decodes messages).
let instantiator: Instantiator = (module) => new WebAssembly.Instance(module, {}).exports;

/** Replaces how instances are made (tests use it to run the debug build). */
export function setInstantiator(make: Instantiator): void {
  instantiator = make;
}

/** A fresh instance with its own memory; throws NotInitializedError before init(). */
export function instantiate(): Kernels {
  if (compiled === undefined) throw new NotInitializedError();
  return instantiator(compiled) as unknown as Kernels;
}
