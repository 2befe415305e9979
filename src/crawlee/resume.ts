// What happens to a seen-set that outlives its queue. Crawlee purges the default queue at
// start; a seen-set kept on disk or in Redis would then answer "seen" for every URL of the new
// crawl and nothing would be fetched. The policy is explicit:
// - "auto" (default): the queue holds requests (a resumed crawl): keep. The queue is empty: a
//   seen-set private to this crawl (memory, window, disk) is cleared; a Redis one, which other
//   processes may share, is an error naming both choices.
// - "keep": always keep (a fleet worker joining a shared set; a crawl of only unseen URLs).
// - "clear": always start empty.
import type { IRequestManager } from "@crawlee/core";
import { CrawlsieveError } from "../errors.js";
import type { SeenSet } from "../index.node.js";

/** The resume policy. */
export type ResumePolicy = "auto" | "keep" | "clear";

/** Thrown by "auto" when an empty queue meets a non-empty shared seen-set. */
export class ResumeConflictError extends CrawlsieveError {
  constructor(keys: number) {
    super(
      "ERR_RESUME_CONFLICT",
      `the request queue is empty but the Redis seen-set holds ${keys} keys: every URL would be dropped as seen. ` +
        'Pass resume: "keep" (a fleet worker, or a crawl of only URLs never seen) or resume: "clear" (start over)',
    );
  }
}

/** Applies the policy; returns what it did, for the log. */
export async function applyResume(
  policy: ResumePolicy,
  queue: IRequestManager,
  seen: SeenSet,
): Promise<"kept" | "cleared"> {
  if (policy === "keep") return "kept";
  if (policy === "clear") {
    await seen.clear();
    return "cleared";
  }
  if (queue.getTotalCount() > 0 || (await queue.handledCount()) > 0 || !(await queue.isEmpty())) return "kept";
  const keys = await seen.size();
  if (keys === 0) return "kept";
  if (seen.backend === "redis") throw new ResumeConflictError(keys);
  await seen.clear();
  return "cleared";
}
