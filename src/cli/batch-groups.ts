// Line batches gathered into groups for a seen-set that pays per call (a durable store flushes
// its file once per call): a group takes batches while the input delivers them within a few
// milliseconds, up to a number of lines, so a file is committed in large groups and a slow input
// (a crawler's pipe) waits at most that long before its lines are committed and printed.
import type { LineBatch } from "./lines.js";

/** Milliseconds a group waits for the next batch: a file's next read comes well within it. */
const WAIT_MS = 5;

/** Groups of consecutive batches: at most `maxLines` lines (a single larger batch alone), ended early when the next batch takes longer than WAIT_MS. */
export async function* batchGroups(batches: AsyncIterable<LineBatch>, maxLines: number): AsyncGenerator<LineBatch[]> {
  const iterator = batches[Symbol.asyncIterator]();
  let next: Promise<IteratorResult<LineBatch>> | undefined = iterator.next();
  while (next !== undefined) {
    const first = await next;
    next = undefined;
    if (first.done === true) return;
    const group = [first.value];
    let lines = first.value.count;
    while (lines < maxLines) {
      const pending = iterator.next();
      let timer: NodeJS.Timeout | undefined;
      const ready = await Promise.race([pending, new Promise<undefined>((resolve) => (timer = setTimeout(resolve, WAIT_MS, undefined)))]);
      clearTimeout(timer);
      if (ready === undefined) {
        next = pending;
        break;
      }
      if (ready.done === true) {
        yield group;
        return;
      }
      group.push(ready.value);
      lines += ready.value.count;
    }
    yield group;
    next ??= iterator.next();
  }
}
