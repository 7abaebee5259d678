// Says aloud, at the end of the run, every test that did not run and why: a conditional skip gives
// its reason through `context.skip(reason)` (test/helpers/skip-unless.ts), which vitest carries to
// the reporter as the test's note.
import type { Reporter, TestModule } from 'vitest/node';

export default class SkipReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const skipped: string[] = [];
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state !== 'skipped') continue;
        const reason = result.note ?? `no reason given (${test.options.mode})`;
        skipped.push(`  ${test.project.name} ${module.relativeModuleId} > ${test.fullName}: ${reason}`);
      }
    }
    if (skipped.length === 0) return;
    process.stdout.write(`\nSkipped ${skipped.length} test(s):\n${skipped.join('\n')}\n`);
  }
}
