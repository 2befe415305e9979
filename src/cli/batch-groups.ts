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
  // A batch taken that would have made its group too large: it starts the next group.
  let held: LineBatch | undefined;
  for (;;) {
    let first: LineBatch;
    if (held !== undefined) {
      first = held;
      held = undefined;
    } else {
      const got = await next!;
      next = undefined;
      if (got.done === true) return;
      first = got.value;
    }
    const group = [first];
    let lines = first.count;
    let ended = false;
    while (lines < maxLines) {
      const pending = next ?? iterator.next();
      next = undefined;
      let timer: NodeJS.Timeout | undefined;
      const ready = await Promise.race([
        pending,
        new Promise<undefined>((resolve) => (timer = setTimeout(resolve, WAIT_MS, undefined))),
      ]);
      clearTimeout(timer);
      if (ready === undefined) {
        next = pending;
        break;
      }
      if (ready.done === true) {
        ended = true;
        break;
      }
      if (lines + ready.value.count > maxLines) {
        held = ready.value;
        break;
      }
      group.push(ready.value);
      lines += ready.value.count;
    }
    yield group;
    if (ended) return;
    if (held === undefined) next ??= iterator.next();
  }
}
