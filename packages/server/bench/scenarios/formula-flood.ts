import { mkdir, writeFile } from 'node:fs/promises'
import { Agent } from 'node:http'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { png } from '../../tests/helpers/fixtures.js'
import { multipartBody } from '../../tests/helpers/multipart.js'
import { type SendInit, sendFrom } from '../../tests/helpers/post-from.js'
import { AUTHORIZATION, fmt, inTempDir, type Profile, ueditorConfig, using } from '../context.js'
import { type ServerProcess, startUeditor } from '../processes.js'
import type { Row } from '../report.js'

// 32 requests in flight, from four client addresses (the whole of 127/8 is local on Linux).
const FLOOD_ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5']
const PER_ADDRESS = 8
const OTHER_CLIENT = '127.0.0.9'
const FULL_SECONDS = 15
const QUIET_SECONDS = 10
const MiB = 2 ** 20
const PROBE_EVERY_MS = 250

/** One request through `agent` (its local address is the client's), answered whole. */
async function send(agent: Agent, url: string, init: SendInit = {}) {
  const res = await sendFrom(url, { ...init, agent, timeoutMs: 120_000 })
  return { ...res, code: String(res.headers['x-ueditor-error'] ?? 'ok') }
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length * q)] ?? Number.NaN
}
const median = (values: number[]) => quantile(values, 0.5)
const failures = (counts: Map<string, number>) =>
  counts.size === 0 ? 'all served' : [...counts].map(([k, v]) => `${v} × ${k}`).join(', ')

/**
 * The other client: every PROBE_EVERY_MS, a 100 KB image upload and a read of a 3-byte static
 * file, each timed on its own. Started on a clock rather than one after another, so a stall is
 * sampled as often as a quiet spell instead of hiding behind its own slowness.
 */
async function otherClient(server: ServerProcess, agent: Agent, until: number) {
  const { body, contentType } = multipartBody([
    {
      name: 'upfile',
      filename: 'photo.png',
      value: png(184, 184, { noise: true }),
      contentType: 'image/png',
    },
  ])
  const headers = { 'Content-Type': contentType, 'Content-Length': body.length, ...AUTHORIZATION }
  const failed = { upload: new Map<string, number>(), static: new Map<string, number>() }
  // A refusal or a reset is a figure of the run (counted, with its time), not a broken harness.
  const timed = async (kind: 'upload' | 'static', work: () => Promise<void>) => {
    const began = performance.now()
    await work().catch((e: unknown) => {
      const what = e instanceof Error ? e.message : String(e)
      failed[kind].set(what, (failed[kind].get(what) ?? 0) + 1)
    })
    return performance.now() - began
  }
  const uploads: Promise<number>[] = []
  const reads: Promise<number>[] = []
  while (Date.now() < until) {
    uploads.push(
      timed('upload', async () => {
        const up = await send(agent, `${server.url}/ueditor?action=image`, {
          method: 'POST',
          headers,
          body,
        })
        if (!up.body.toString().includes('"state":"SUCCESS"'))
          throw new Error(`${up.status} ${JSON.parse(up.body.toString()).code}`)
      }),
    )
    reads.push(
      timed('static', async () => {
        const small = await send(agent, `${server.url}/small.txt`)
        if (small.status !== 200 || small.body.toString() !== 'abc')
          throw new Error(`${small.status}`)
      }),
    )
    await sleep(PROBE_EVERY_MS)
  }
  const uploadMs = await Promise.all(uploads)
  const staticMs = await Promise.all(reads)
  return {
    ms: { upload: uploadMs, static: staticMs },
    median: { upload: median(uploadMs), static: median(staticMs) },
    failed,
  }
}

interface Flooded {
  seconds: number
  quiet: Awaited<ReturnType<typeof otherClient>>
  loaded: Awaited<ReturnType<typeof otherClient>>
  answers: Map<string, number>
  rssBefore: number
  peakRss: number
  rssAfter: number
}

/**
 * One server, measured quiet, then under the flood, then after a quiet spell. `target` makes each
 * flood request's path: a new formula, or the same cheap answer every time (the floor that any
 * flood of this shape costs on this machine).
 */
function flood(
  p: Profile,
  env: Record<string, string>,
  target: (n: number) => string,
): Promise<Flooded> {
  return inTempDir(async (dir) => {
    const site = join(dir, 'site')
    await mkdir(site)
    await writeFile(join(site, 'small.txt'), 'abc')
    const config = ueditorConfig(join(dir, 'data'), { site: { dir: site } })
    return using(startUeditor(dir, config, env), async (server) => {
      const agents = FLOOD_ADDRESSES.map(
        (localAddress) => new Agent({ keepAlive: true, localAddress, maxSockets: PER_ADDRESS }),
      )
      // A new connection per request, as a visitor's browser opens them.
      const other = new Agent({ keepAlive: false, localAddress: OTHER_CLIENT })
      try {
        const seconds = p.smoke ? 2 : FULL_SECONDS
        const quiet = await otherClient(server, other, Date.now() + (p.smoke ? 1 : 3) * 1000)
        const rssBefore = server.rssBytes()
        const until = Date.now() + seconds * 1000
        const answers = new Map<string, number>()
        let n = 0
        const floodOne = async (agent: Agent) => {
          while (Date.now() < until) {
            const got = await send(agent, `${server.url}${target(n++)}`)
            const what = `${got.status} ${got.code}`
            answers.set(what, (answers.get(what) ?? 0) + 1)
          }
        }
        const flooders = agents.flatMap((agent) =>
          Array.from({ length: PER_ADDRESS }, () => floodOne(agent)),
        )
        await sleep(500)
        const loaded = await otherClient(server, other, until)
        await Promise.all(flooders)
        const peakRss = server.peakRssBytes()
        await sleep(quietSeconds(p) * 1000)
        const rssAfter = server.rssBytes()
        return { seconds, quiet, loaded, answers, rssBefore, peakRss, rssAfter }
      } finally {
        for (const agent of [...agents, other]) agent.destroy()
      }
    })
  })
}

const quietSeconds = (p: Profile) => (p.smoke ? 1 : QUIET_SECONDS)

const memory = (p: Profile, f: Flooded) =>
  `${fmt(f.peakRss / MiB)} MiB at most; ${fmt(f.rssBefore / MiB)} MiB before the flood, ` +
  `${fmt(f.rssAfter / MiB)} MiB ${quietSeconds(p)} s after it`

// glibc raises its mmap threshold after freeing a large block (up to 32 MB), so the drawings'
// buffers that follow come from per-thread arenas and stay resident; a fixed threshold keeps
// them out of the arenas (docs/operations.md, Memory).
const FIXED_MMAP_THRESHOLD = { MALLOC_MMAP_THRESHOLD_: '1048576' }

/**
 * Distinct large formulas as PNGs (each about 3.6 megapixels, under `formula.pngMaxPixels`) from
 * 32 parallel requests, while another client uploads a 100 KB image and reads a 3-byte static
 * file: their latencies quiet and under the flood, and the server's memory; then the memory
 * again on a server started with a fixed glibc mmap threshold, and the same flood shape on
 * `/healthz` for reference.
 */
export async function formulaFloodScenario(p: Profile): Promise<Row[]> {
  const formulas = (n: number) => `/formula.png?${encodeURIComponent(`\\rule{550pt}{500.${n}pt}`)}`
  const f = await flood(p, {}, formulas)
  const floor = await flood(p, {}, () => '/healthz')
  // The same code path as the first run: --smoke, which proves the harness, leaves it out.
  const fixed = p.smoke ? undefined : await flood(p, FIXED_MMAP_THRESHOLD, formulas)
  const what = `${fmt(f.seconds)} s of distinct 3.6-megapixel formula PNGs, 32 in flight from 4 addresses`
  const maxOf = (values: number[]) => Math.max(...values)
  const otherClientRow = (
    kind: 'upload' | 'static',
    scenario: string,
    counted: string,
    limitMs: number,
  ): Row => {
    const ms = f.loaded.ms[kind]
    const loadedMedian = f.loaded.median[kind]
    return {
      scenario,
      server: `median ${fmt(loadedMedian)} ms (quiet: ${fmt(f.quiet.median[kind])} ms), p90 ${fmt(quantile(ms, 0.9))} ms, max ${fmt(maxOf(ms))} ms; ${ms.length} ${counted}, ${failures(f.loaded.failed[kind])}`,
      target: { what: 'median', value: loadedMedian, unit: 'ms', op: '<=', limit: limitMs },
      figures: {
        medianMs: loadedMedian,
        quietMedianMs: f.quiet.median[kind],
        maxMs: maxOf(ms),
        failed: [...f.loaded.failed[kind].values()].reduce((a, b) => a + b, 0),
      },
    }
  }
  const rows: Row[] = [
    otherClientRow(
      'upload',
      `formula flood: another client's 100 KB image upload (${what})`,
      'uploads',
      2000,
    ),
    otherClientRow('static', "formula flood: another client's 3-byte static file", 'reads', 500),
    {
      scenario: 'formula flood: RSS of the server',
      server: memory(p, f),
      target: { what: 'peak RSS', value: f.peakRss / MiB, unit: 'MiB', op: '<=', limit: 700 },
      figures: { peakRssBytes: f.peakRss, rssBeforeBytes: f.rssBefore, rssAfterBytes: f.rssAfter },
    },
    {
      scenario: 'formula flood: the flood’s answers',
      server: [...f.answers].map(([k, v]) => `${v} × ${k}`).join(', '),
      figures: Object.fromEntries(f.answers),
    },
    {
      scenario: 'the same flood shape on /healthz (reference: what any such flood costs here)',
      server: `upload median ${fmt(floor.loaded.median.upload)} ms, p90 ${fmt(quantile(floor.loaded.ms.upload, 0.9))} ms; static median ${fmt(floor.loaded.median.static)} ms, p90 ${fmt(quantile(floor.loaded.ms.static, 0.9))} ms; ${[...floor.answers.values()].reduce((a, b) => a + b, 0)} requests`,
      figures: {
        uploadMedianMs: floor.loaded.median.upload,
        staticMedianMs: floor.loaded.median.static,
      },
    },
  ]
  if (fixed)
    rows.push({
      scenario: 'formula flood again, server started with MALLOC_MMAP_THRESHOLD_=1048576: RSS',
      server: `${memory(p, fixed)}; upload median ${fmt(fixed.loaded.median.upload)} ms, static median ${fmt(fixed.loaded.median.static)} ms`,
      figures: {
        peakRssBytes: fixed.peakRss,
        rssBeforeBytes: fixed.rssBefore,
        rssAfterBytes: fixed.rssAfter,
      },
    })
  return rows
}
