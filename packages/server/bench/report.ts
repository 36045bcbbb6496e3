import { writeFile } from 'node:fs/promises'
import { fmt } from './context.js'

export interface Target {
  /** What the target is checked on, e.g. `ratio to bare` or `p99 at 1M`. */
  what: string
  value: number
  unit: string
  op: '>=' | '<='
  limit: number
}

export interface Row {
  scenario: string
  /** This server's figures, formatted. */
  server: string
  /** The bare baseline's figures in the same run, when the scenario has one. */
  baseline?: string
  /** Absent: the scenario is reported only. */
  target?: Target
  /** Numbers as measured, for results.json. */
  figures?: Record<string, number>
}

const MB = 1024 * 1024

/** A streaming upload's memory row: the server's peak RSS, at most 250 MB whatever the file size. */
export function peakRssRow(scenario: string, peakRss: number): Row {
  return {
    scenario,
    server: `${fmt(peakRss / MB)} MB`,
    target: { what: 'peak RSS', value: peakRss / MB, unit: 'MB', op: '<=', limit: 250 },
    figures: { peakRssBytes: peakRss },
  }
}

export type Status = 'PASS' | 'FAIL' | 'reported' | 'skipped' | 'ERROR'

export interface Outcome extends Row {
  status: Status
  error?: string
}

export function judge(row: Row): Outcome {
  const t = row.target
  if (!t) return { ...row, status: 'reported' }
  const ok = t.op === '>=' ? t.value >= t.limit : t.value <= t.limit
  return { ...row, status: ok ? 'PASS' : 'FAIL' }
}

/** A scenario group this machine cannot run (and CI must), with the reason in its row. */
export function skipped(scenario: string, reason: string): Outcome {
  return { scenario, server: reason, status: 'skipped' }
}

export function broken(scenario: string, error: unknown): Outcome {
  const message = error instanceof Error ? error.message : String(error)
  return { scenario, server: '', status: 'ERROR', error: message }
}

const number = (v: number) =>
  v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(v >= 10 ? 1 : 2)

function targetText(t: Target | undefined): string {
  return t ? `${t.what}: ${number(t.value)} ${t.unit} (${t.op} ${number(t.limit)})` : ''
}

/** One line per scenario, columns padded to the widest cell. */
export function table(outcomes: readonly Outcome[]): string {
  const header = ['scenario', 'this server', 'bare baseline', 'checked', 'result']
  const rows = outcomes.map((o) => [
    o.scenario,
    o.status === 'ERROR' ? `harness error: ${o.error}` : o.server,
    o.baseline ?? '',
    targetText(o.target),
    o.status,
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join(' | ')
      .trimEnd()
  return [line(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.map(line)].join('\n')
}

export function tally(outcomes: readonly Outcome[]): { passed: number; failed: number } {
  return {
    passed: outcomes.filter((o) => o.status === 'PASS').length,
    failed: outcomes.filter((o) => o.status === 'FAIL').length,
  }
}

export async function writeResults(
  file: string,
  run: {
    smoke: boolean
    largest?: number
    machine: object
    groups: readonly object[]
    outcomes: readonly Outcome[]
  },
): Promise<void> {
  const when = new Date().toISOString()
  await writeFile(file, `${JSON.stringify({ when, ...run, ...tally(run.outcomes) }, null, 2)}\n`)
}
