// A node --test reporter (tools/test.sh adds it beside the TAP one): at the end, the ten test files whose
// top-level tests took longest, with their summed durations, so that a CI run shows where its minutes went.
export default async function* slowestFiles(source) {
  const byFile = new Map();
  for await (const { type, data } of source) {
    if ((type === 'test:pass' || type === 'test:fail') && data.nesting === 0 && data.file) {
      byFile.set(data.file, (byFile.get(data.file) ?? 0) + (data.details?.duration_ms ?? 0));
    }
  }
  const rows = [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 10);
  const total = [...byFile.values()].reduce((a, b) => a + b, 0);
  yield `slowest test files (summed top-level test time, ${byFile.size} files, ${(total / 1000).toFixed(0)} s in all):\n`;
  for (const [file, ms] of rows) yield `  ${(ms / 1000).toFixed(1).padStart(7)} s  ${file.replace(process.cwd() + '/', '')}\n`;
}
