// Prints one plain closing line, "tests: N passed, N failed, N skipped", that CI reads whatever
// the runner: vitest's own summary has no fixed wording.
import type { Reporter, TestModule } from "vitest/node";

/** The closing-line reporter. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    for (const module of testModules) {
      let failedHere = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failedHere++;
        else skipped++;
      }
      // A file whose setup failed fails as a whole even though its tests never ran.
      failed += module.state() === "failed" && failedHere === 0 ? 1 : failedHere;
    }
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
