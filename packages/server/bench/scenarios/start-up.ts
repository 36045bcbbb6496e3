import { join } from 'node:path'
import { fmt, inTempDir, type Profile } from '../context.js'
import { type ServerProcess, startBare, startUeditor, timeToExit } from '../processes.js'
import type { Row } from '../report.js'

/*
 * What a process pays before it does anything: every test, cron line and node of a rolling
 * restart pays it. Each figure is the median of several runs taken in turns with its baseline,
 * so both see the same machine; the targets are ratios to that baseline.
 */
const RUNS = { smoke: 3, full: 9 }
const MB = 1024 * 1024
/** A command that only prints: at most this many times a Node that does nothing. */
const COMMAND_RATIO = 3
/** A fresh server ready to serve: at most this many times a bare node:http listen. */
const READY_RATIO = 5
const RSS_LIMIT_MB = 80

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

/** Milliseconds from spawn to the first 200 of `path`, and the resident memory then. */
async function timeToReady(
  start: () => Promise<ServerProcess>,
  path: string,
): Promise<{ ms: number; rss: number }> {
  const started = performance.now()
  const server = await start()
  try {
    for (;;) {
      const answer = await fetch(`${server.url}${path}`).catch(() => undefined)
      await answer?.arrayBuffer()
      if (answer?.status === 200) break
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    return { ms: performance.now() - started, rss: server.rssBytes() }
  } finally {
    await server.stop()
  }
}

async function commandRow(flag: string, runs: number): Promise<Row> {
  const ms: number[] = []
  const bare: number[] = []
  for (let i = 0; i < runs; i++) {
    bare.push(await timeToExit(['-e', '0']))
    ms.push(await timeToExit([flag], { standalone: true }))
  }
  const value = median(ms) / median(bare)
  return {
    scenario: `ueditor-server ${flag}, spawn to exit (median of ${runs})`,
    server: `${fmt(median(ms))} ms`,
    baseline: `node -e 0: ${fmt(median(bare))} ms`,
    target: { what: 'ratio to node -e 0', value, unit: 'x', op: '<=', limit: COMMAND_RATIO },
    figures: { medianMs: median(ms), bareMedianMs: median(bare) },
  }
}

/** `--version`, `--help`, and a fresh server on the embedded defaults, each beside bare Node. */
export function startUpScenarios(p: Profile): Promise<Row[]> {
  const runs = p.smoke ? RUNS.smoke : RUNS.full
  return inTempDir(async (dir) => {
    const rows = [await commandRow('--version', runs), await commandRow('--help', runs)]
    const ready: { ms: number; rss: number }[] = []
    const bare: { ms: number; rss: number }[] = []
    for (let i = 0; i < runs; i++) {
      bare.push(await timeToReady(() => startBare(['listen']), '/'))
      // Nothing set but where it writes and listens: the defaults a first start runs on.
      const config = { dataDir: join(dir, `data-${i}`), http: { host: '127.0.0.1', port: 0 } }
      ready.push(await timeToReady(() => startUeditor(join(dir), config), '/readyz'))
    }
    const readyMs = median(ready.map((r) => r.ms))
    const bareMs = median(bare.map((r) => r.ms))
    const rss = median(ready.map((r) => r.rss)) / MB
    const bareRss = median(bare.map((r) => r.rss)) / MB
    rows.push(
      {
        scenario: `fresh server on the defaults, spawn to /readyz 200 (median of ${runs})`,
        server: `${fmt(readyMs)} ms`,
        baseline: `node:http listen, spawn to 200: ${fmt(bareMs)} ms`,
        target: {
          what: 'ratio to bare',
          value: readyMs / bareMs,
          unit: 'x',
          op: '<=',
          limit: READY_RATIO,
        },
        figures: { medianMs: readyMs, bareMedianMs: bareMs },
      },
      {
        scenario: `fresh server on the defaults, resident memory once ready (median of ${runs})`,
        server: `${fmt(rss)} MB`,
        baseline: `node:http listen: ${fmt(bareRss)} MB`,
        target: { what: 'RSS', value: rss, unit: 'MB', op: '<=', limit: RSS_LIMIT_MB },
        figures: { rssBytes: rss * MB, bareRssBytes: bareRss * MB },
      },
    )
    return rows
  })
}
