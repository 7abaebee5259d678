// Says aloud, at the end of the run, every test that did not run and why. A conditional skip gives
// its reason either as the test's (or its describe's) option `{ meta: { skipReason } }` beside
// `.skipIf(...)`, or through `context.skip(reason)` inside the test: both reach the reporter.
import type { Reporter, TestCase, TestModule, TestSuite } from 'vitest/node';

export default class SkipReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const skipped: string[] = [];
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state !== 'skipped') continue;
        const reason = result.note ?? reasonOf(test) ?? `no reason given (${test.options.mode})`;
        skipped.push(`  ${test.project.name} ${module.relativeModuleId} > ${test.fullName}: ${reason}`);
      }
    }
    if (skipped.length === 0) return;
    process.stdout.write(`\nSkipped ${skipped.length} test(s):\n${skipped.join('\n')}\n`);
  }
}

/** The `skipReason` a test, or a describe around it, carries in its meta . */
function reasonOf(test: TestCase): string | undefined {
  for (let node: TestCase | TestSuite | TestModule = test; node.type !== 'module'; node = node.parent) {
    const reason = (node.meta() as { skipReason?: string }).skipReason;
    if (reason !== undefined) return reason;
  }
  return undefined;
}
