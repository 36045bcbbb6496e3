import { mkdir, writeFile } from 'node:fs/promises'
import { Agent, request } from 'node:http'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { png } from '../../tests/helpers/fixtures.js'
import { multipartBody } from '../../tests/helpers/multipart.js'
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

interface Answer {
  status: number
  code: string
  body: Buffer
}

function send(
  agent: Agent,
  url: string,
  o: { method?: string; headers?: Record<string, string | number>; body?: Buffer } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, method: o.method ?? 'GET', headers: o.headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          code: String(res.headers['x-ueditor-error'] ?? 'ok'),
          body: Buffer.concat(chunks),
        }),
      )
      res.on('error', reject)
    })
    req.setTimeout(120_000, () => req.destroy(new Error(`no answer in 120 s: ${url}`)))
    req.on('error', reject)
    req.end(o.body)
  })
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

/** The other client: a 100 KB image upload, then a 3-byte static file, in turn, timed apart. */
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
  const uploadMs: number[] = []
  const staticMs: number[] = []
  while (Date.now() < until) {
    let began = performance.now()
    const up = await send(agent, `${server.url}/ueditor?action=image`, {
      method: 'POST',
      headers,
      body,
    })
    uploadMs.push(performance.now() - began)
    if (!up.body.toString().includes('"state":"SUCCESS"'))
      throw new Error(`the other client's upload failed: ${up.status} ${up.body}`)
    began = performance.now()
    const small = await send(agent, `${server.url}/small.txt`)
    staticMs.push(performance.now() - began)
    if (small.status !== 200 || small.body.toString() !== 'abc')
      throw new Error(`the static file answered ${small.status}`)
  }
  return { uploadMs, staticMs, median: { upload: median(uploadMs), static: median(staticMs) } }
}

/**
 * Distinct large formulas as PNGs (each about 3.6 megapixels, under `formula.pngMaxPixels`) from
 * 32 parallel requests, while another client uploads a 100 KB image and reads a 3-byte static
 * file: their latencies quiet and under the flood, and the server's memory.
 */
export function formulaFloodScenario(p: Profile): Promise<Row[]> {
  return inTempDir(async (dir) => {
    const site = join(dir, 'site')
    await mkdir(site)
    await writeFile(join(site, 'small.txt'), 'abc')
    const config = ueditorConfig(join(dir, 'data'), { site: { dir: site } })
    return using(startUeditor(dir, config), async (server) => {
      const agents = FLOOD_ADDRESSES.map(
        (localAddress) => new Agent({ keepAlive: true, localAddress, maxSockets: PER_ADDRESS }),
      )
      const other = new Agent({ keepAlive: true, localAddress: OTHER_CLIENT })
      try {
        const seconds = p.smoke ? 2 : FULL_SECONDS
        const quiet = await otherClient(server, other, Date.now() + (p.smoke ? 1 : 3) * 1000)
        const rssBefore = server.rssBytes()

        const until = Date.now() + seconds * 1000
        const answers = new Map<string, number>()
        let n = 0
        const floodOne = async (agent: Agent) => {
          while (Date.now() < until) {
            const tex = encodeURIComponent(`\\rule{550pt}{500.${n++}pt}`)
            const got = await send(agent, `${server.url}/formula.png?${tex}`)
            const what = `${got.status} ${got.code}`
            answers.set(what, (answers.get(what) ?? 0) + 1)
          }
        }
        const flood = agents.flatMap((agent) =>
          Array.from({ length: PER_ADDRESS }, () => floodOne(agent)),
        )
        await sleep(500)
        const loaded = await otherClient(server, other, until)
        await Promise.all(flood)
        const peakRss = server.peakRssBytes()
        await sleep((p.smoke ? 1 : QUIET_SECONDS) * 1000)
        const rssAfter = server.rssBytes()

        const flooded = `${fmt(seconds)} s of distinct 3.6-megapixel formula PNGs, 32 in flight from 4 addresses`
        const counts = [...answers].map(([k, v]) => `${v} × ${k}`).join(', ')
        const rows: Row[] = [
          {
            scenario: `formula flood: another client's 100 KB image upload (${flooded})`,
            server: `median ${fmt(loaded.median.upload)} ms (quiet: ${fmt(quiet.median.upload)} ms), max ${fmt(Math.max(...loaded.uploadMs))} ms, ${loaded.uploadMs.length} uploads`,
            target: {
              what: 'median',
              value: loaded.median.upload,
              unit: 'ms',
              op: '<=',
              limit: 2000,
            },
            figures: {
              medianMs: loaded.median.upload,
              quietMedianMs: quiet.median.upload,
              maxMs: Math.max(...loaded.uploadMs),
            },
          },
          {
            scenario: "formula flood: another client's 3-byte static file",
            server: `median ${fmt(loaded.median.static)} ms (quiet: ${fmt(quiet.median.static)} ms), max ${fmt(Math.max(...loaded.staticMs))} ms`,
            target: {
              what: 'median',
              value: loaded.median.static,
              unit: 'ms',
              op: '<=',
              limit: 500,
            },
            figures: {
              medianMs: loaded.median.static,
              quietMedianMs: quiet.median.static,
              maxMs: Math.max(...loaded.staticMs),
            },
          },
          {
            scenario: 'formula flood: peak RSS of the server',
            server: `${fmt(peakRss / MiB)} MiB at most; ${fmt(rssBefore / MiB)} MiB before the flood, ${fmt(rssAfter / MiB)} MiB ${p.smoke ? 1 : QUIET_SECONDS} s after it`,
            target: { what: 'peak RSS', value: peakRss / MiB, unit: 'MiB', op: '<=', limit: 700 },
            figures: { peakRssBytes: peakRss, rssBeforeBytes: rssBefore, rssAfterBytes: rssAfter },
          },
          {
            scenario: 'formula flood: the flood’s answers',
            server: counts,
            figures: Object.fromEntries(answers),
          },
        ]
        return rows
      } finally {
        for (const agent of [...agents, other]) agent.destroy()
      }
    })
  })
}
