// RSS sampled every 250 ms while a runner works: shows whether memory is flat or growing during a
// run, and where it is (V8 heap or native) at the highest sample.
export function sampleRss() {
  const samples = [];
  let atPeak = { rss: 0 };
  const timer = setInterval(() => {
    const usage = process.memoryUsage();
    samples.push(usage.rss);
    if (usage.rss > atPeak.rss) atPeak = usage;
  }, 250);
  return {
    timer,
    stop: () => clearInterval(timer),
    /** RSS at 25 %, 50 %, 75 % of the run and at its end, and process.memoryUsage() at the peak. */
    report() {
      const pick = (i) => samples[Math.min(samples.length - 1, Math.floor(i * samples.length))] ?? 0;
      return { rssQuartiles: [pick(0.25), pick(0.5), pick(0.75), pick(0.999)], atPeak };
    },
  };
}
