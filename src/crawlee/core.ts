// The values crawlsieve/crawlee takes from @crawlee/core, loaded in one place so that a project
// without Crawlee gets one line naming the missing optional peer and how to install it, not a
// bare ERR_MODULE_NOT_FOUND. require() gives the same module instances as Crawlee's own ESM
// entry, which re-exports its CommonJS build (one Configuration, one log). Values only: types
// come from @crawlee/core itself (import type), so the reference names Crawlee's own.
import { createRequire } from "node:module";
import type * as Core from "@crawlee/core";
import { CrawlsieveError } from "../errors.js";

function load(): typeof Core {
  try {
    return createRequire(import.meta.url)("@crawlee/core") as typeof Core;
  } catch (error) {
    if (
      (error as { code?: string }).code !== "MODULE_NOT_FOUND" ||
      !String((error as Error).message).includes("@crawlee/core")
    )
      throw error;
    const missing = new CrawlsieveError(
      "ERR_MISSING_PEER",
      "crawlsieve/crawlee needs Crawlee, an optional peer dependency that is not installed: npm install crawlee",
    );
    missing.stack = `${missing.name}: ${missing.message}`;
    throw missing;
  }
}

const core = load();
/** @crawlee/core's Request. */
export const Request = core.Request;
/** @crawlee/core's log. */
export const log = core.log;
/** @crawlee/core's KeyValueStore. */
export const KeyValueStore = core.KeyValueStore;
/** @crawlee/core's Configuration. */
export const Configuration = core.Configuration;
/** @crawlee/core's getRequestId. */
export const getRequestId = core.getRequestId;
/** @crawlee/core's RequestQueue. */
export const RequestQueue = core.RequestQueue;
