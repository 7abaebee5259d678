// The order a mutant's tests run in: the unit files, then the integration files, each the quickest
// first. StrykerJS stops a mutant's run at its first failing test (bail), so the sooner a test that
// fails runs, the sooner the mutant is done; the suite's own order (longest first, for two workers
// to end together) made every mutant of a module's constants, which runs all the tests that reach its
// file, wait through the longest integration files before the unit test that catches it in
// milliseconds. A file's time is vitest's from its last run here, else its size.
import { stat } from 'node:fs/promises';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const LAYERS = ['unit', 'integration'];

export default class ShortestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const keyed = await Promise.all(
      files.map(async (spec) => {
        const duration = this.ctx.cache.getTestSpecificationResult(spec)?.duration;
        const layer = LAYERS.indexOf(spec.project.name);
        return { spec, layer: layer === -1 ? LAYERS.length : layer, cost: duration ?? (await stat(spec.moduleId)).size };
      }),
    );
    return keyed.sort((a, b) => a.layer - b.layer || a.cost - b.cost).map(({ spec }) => spec);
  }
}
