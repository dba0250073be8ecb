// The Markdown table printed at the end of a run (and pasted into bench/README.md).
import type { Machine } from './machine.ts';
import type { ScenarioResult } from './result.ts';

const num = (n: number | null | undefined) => (n === null || n === undefined || Number.isNaN(n) ? '–' : n.toLocaleString('en-US', { maximumFractionDigits: 3 }));

export function markdownTable(machine: Machine, profile: string, scenarios: Record<string, ScenarioResult>): string {
  const lines = [
    `Machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGb} GB, load ${machine.loadAverage1m} at start; Node ${machine.node}; ` +
      `${machine.postgres.split(' on ')[0]}; NATS ${machine.nats ?? 'not reachable'}. Profile: ${profile}.`,
    '',
    '| scenario | value | ceiling / peer | ratio | target | met |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  for (const [name, r] of Object.entries(scenarios)) {
    const ceiling = r.ceiling === null ? '–' : `${num(r.ceiling)} (${r.ceilingName})`;
    const met = r.met === null ? '–' : r.met ? 'yes' : `**no**: ${r.shortBy}`;
    lines.push(`| ${name} | ${num(r.value)} ${r.unit} | ${ceiling} | ${num(r.ratio)} | ${r.target ?? '–'} | ${met} |`);
  }
  return lines.join('\n');
}
