// The soak's verdicts and report (report.md for people, report.json with
// every sample for whoever wants to plot it).
//
// Verdicts:
// - RSS flat: the active phase's samples cut in thirds (the first third is
//   warm-up: allocator arenas, caches, thread stacks); RSS without the
//   resident pages of the trace store's mapped file (soak.mjs: storeMiB,
//   shown beside it; 0 without the doors); the mean of the last
//   third may exceed the mean of the middle third by at most
//   max(flatPct % of it, flatFloorMiB). The floor keeps a ~30 MiB process
//   from failing on allocator noise; the percentage catches a real leak,
//   which grows with traffic and so with time.
// - fds: once everything is gone, no more open fds than at the baseline
//   (listeners up, the stable runtimes connected) plus 2 for the stats
//   request in flight and a log file reopened.
// - leaks: every live count of both checkpoints at zero (sockets.api <= 1:
//   the stats request itself).
// - the manager stayed up and exited 0 on SIGTERM.
import fs from 'node:fs';
import path from 'node:path';

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const judged = (s) => s.judgedMiB ?? s.rssMiB;
const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : String(x));

/** Least-squares slope of RSS (MiB) over time (minutes). */
function slopePerMinute(samples) {
  if (samples.length < 2) return NaN;
  const xs = samples.map((s) => s.t / 60);
  const ys = samples.map(judged);
  const mx = mean(xs);
  const my = mean(ys);
  const num = xs.reduce((a, x, i) => a + (x - mx) * (ys[i] - my), 0);
  const den = xs.reduce((a, x) => a + (x - mx) ** 2, 0);
  return den === 0 ? NaN : num / den;
}

export function writeReport(result, samples, { flatPct, flatFloorMiB }) {
  const active = samples.filter((s) => s.phase === 'active');
  const third = Math.floor(active.length / 3);
  const thirds = [active.slice(0, third), active.slice(third, 2 * third), active.slice(2 * third)];
  const thirdMeans = (f) => thirds.map((t) => (t.length ? mean(t.map(f)) : NaN));
  const [firstMean, middleMean, lastMean] = thirdMeans(judged);
  const storeOn = samples.some((s) => s.storeMiB > 0);
  const raw = storeOn ? `; VmRSS ${thirdMeans((s) => s.rssMiB).map((x) => fmt(x)).join(' / ')} MiB, of it the trace store's mapped file ${thirdMeans((s) => s.storeMiB).map((x) => fmt(x)).join(' / ')} MiB` : '';
  const allowed = Math.max((middleMean * flatPct) / 100, flatFloorMiB);
  const rssFlat = third > 0 && lastMean - middleMean <= allowed;
  const fdsOk = result.final.fds <= result.baseline.fds + 2;
  const leaksOk = result.checkpoints.every((c) => c.zero);
  const exitOk = result.managerExit?.code === 0;
  const pass = rssFlat && fdsOk && leaksOk && exitOk;
  const maxRss = Math.max(...samples.map(judged));
  const maxFds = Math.max(...samples.map((s) => s.fds));

  const lines = [];
  const p = (s = '') => lines.push(s);
  p(`# Soak report: ${pass ? 'PASS' : 'FAIL'}`);
  p();
  p(`${result.minutes} min (active phase ${result.activeMs / 1000} s), intensity ${result.intensity}, ${samples.length} samples; manager log: ${result.managerLog}`);
  p();
  p('| verdict | result | figures |');
  p('|---|---|---|');
  p(`| RSS flat (last third within max(${flatPct} %, ${flatFloorMiB} MiB) of the middle third${storeOn ? '; without the trace store\'s mapped pages' : ''}) | ${rssFlat ? 'yes' : 'NO'} | thirds ${fmt(firstMean)} / ${fmt(middleMean)} / ${fmt(lastMean)} MiB (allowed +${fmt(allowed)}), slope over the last two thirds ${fmt(slopePerMinute([...thirds[1], ...thirds[2]]), 2)} MiB/min, max ${fmt(maxRss)} MiB${raw} |`);
  p(`| fds back to the baseline | ${fdsOk ? 'yes' : 'NO'} | baseline ${result.baseline.fds}, max ${maxFds}, after everything is gone ${result.final.fds} |`);
  for (const c of result.checkpoints) {
    p(`| live counts zero: ${c.name} | ${c.zero ? 'yes' : 'NO'} | ${Object.entries(c.counts).map(([k, v]) => `${k.replace('actors.', '')} ${v}`).join(', ')} (waited ${c.waitedMs} ms) |`);
  }
  p(`| manager exit on SIGTERM | ${exitOk ? 'yes' : 'NO'} | ${JSON.stringify(result.managerExit)} |`);
  p();
  p('## RSS and fds over time');
  p();
  p('| t (s) | phase | RSS MiB (anon/file/trace store) | fds | threads | pending | callers | invocations | channels | runtimes | sockets api/runtime/worker |');
  p('|---|---|---|---|---|---|---|---|---|---|---|');
  const step = Math.max(1, Math.ceil(samples.length / 20));
  const shown = samples.filter((s, i) => i % step === 0 || s.phase !== 'active' || i === samples.length - 1);
  for (const s of shown) {
    const st = s.stats ?? {};
    p(`| ${fmt(s.t, 0)} | ${s.phase} | ${fmt(s.rssMiB)} (${fmt(s.anonMiB)}/${fmt(s.fileMiB)}/${fmt(s.storeMiB)}) | ${s.fds} | ${s.threads} | ${st.actors?.pending_request ?? '?'} | ${st.actors?.caller_session ?? '?'} | ${st.actors?.invocation ?? '?'} | ${st.actors?.channel ?? '?'} | ${st.runtimes ?? '?'} | ${st.sockets ? `${st.sockets.api}/${st.sockets.runtime}/${st.sockets.worker}` : s.statsError ?? '?'} |`);
  }
  p();
  p('## What the soak did (rounds by outcome)');
  p();
  for (const [k, v] of Object.entries(result.tally.counts).sort()) p(`- ${k}: ${v}`);
  const errs = Object.entries(result.tally.lastError);
  if (errs.length) {
    p();
    p('Last error per workload (rounds that failed on the soak side; expected for some while peers die):');
    p();
    for (const [k, v] of errs) p(`- ${k}: ${v}`);
  }
  if (result.doors) {
    const dr = result.doors;
    const exit = (e) => (e ? JSON.stringify({ code: e.code, signal: e.signal }) : '?');
    p();
    p('## Doors (gRPC, cluster, trace store)');
    p();
    p(`- gRPC door ${dr.grpc}, cluster port ${dr.cluster}; node b: exit on SIGTERM ${exit(dr.nodeB)} (RSS before it ${fmt(dr.nodeBRssMiB)} MiB, log ${dr.nodeBLog}), stable-b exit ${exit(dr.stableB)}`);
    p(`- largest answer to the batch of 32 listTraces(1000): ${dr.notes?.batchMaxBytes ?? '?'} bytes${dr.notes?.telemetryAnswer ? `; a 4 MiB displayName got: ${dr.notes.telemetryAnswer}` : ''}`);
    if (dr.store) p(`- trace store files at the end (removed): ${Object.entries(dr.store).map(([f, n]) => `${f} ${fmt(n / 1048576)} MiB`).join(', ')}`);
    if (dr.metrics?.length) {
      p('- node a\'s door counters at "callers gone":');
      p();
      p('```');
      for (const l of dr.metrics) p(l);
      p('```');
    }
  }
  if (result.warnings?.length) {
    p();
    p('## Manager warnings and errors (last 5000 lines, numbers blanked)');
    p();
    for (const [text, n] of result.warnings) p(`- ${n} x \`${text.replace(/`/g, "'")}\``);
  }
  if (result.cleanupProblems) {
    p();
    p(`Cleanup: ${result.cleanupProblems}`);
  }
  const text = lines.join('\n') + '\n';
  fs.writeFileSync(path.join(result.outDir, 'report.md'), text);
  fs.writeFileSync(
    path.join(result.outDir, 'report.json'),
    JSON.stringify({ ...result, verdicts: { pass, rssFlat, fdsOk, leaksOk, exitOk, firstMean, middleMean, lastMean, allowed }, samples }, null, 1)
  );
  return { text, pass };
}
