// Line batches gathered into groups for a seen-set that pays per call (a durable store flushes
// its file once per call): a group takes batches while the input has them ready, up to a number
// of lines, so a fast input is committed in large groups and a slow one (a crawler's pipe) is
// never held back waiting for more.
import type { LineBatch } from "./lines.js";

/** Groups of consecutive batches: at most `maxLines` lines (a single larger batch alone), ended early when the next batch is not ready. */
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
      // Ready now (already read) or later: a macrotask turn tells them apart.
      const ready = await Promise.race([pending, new Promise<undefined>((resolve) => setImmediate(resolve, undefined))]);
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
