import { randomBytes } from 'node:crypto'
import { Agent } from 'node:http'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { sofficeHasWriter } from '../../src/shared/soffice-path.js'
import { png } from '../../tests/helpers/fixtures.js'
import {
  INSTALL_LIBREOFFICE,
  officeFile,
  redEmf,
  SOFFICE,
} from '../../tests/helpers/libreoffice.js'
import { multipartBody } from '../../tests/helpers/multipart.js'
import { sendFrom } from '../../tests/helpers/post-from.js'
import {
  AUTHORIZATION,
  BENCH_TOKEN_ENTRY,
  BENCH_USER,
  fmt,
  inTempDir,
  type Profile,
  ueditorConfig,
  using,
} from '../context.js'
import { type ServerProcess, startUeditor, treeCpuMicros } from '../processes.js'
import type { Row } from '../report.js'

const FLOOD_ADDRESS = '127.0.0.2'
const OTHER_CLIENT = '127.0.0.9'
const IN_FLIGHT = 8
const PROBE_EVERY_MS = 250
// What one client's flood may add to another client's ordinary upload (docs/benchmarks.md).
const ADDED_DELAY_LIMIT_MS = 300

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length * q)] ?? Number.NaN
const median = (values: number[]) => quantile(values, 0.5)

function upload(bytes: Buffer, filename: string, type: string, auth: Record<string, string>) {
  const { body, contentType } = multipartBody([
    { name: 'upfile', filename, value: bytes, contentType: type },
  ])
  return { headers: { 'Content-Type': contentType, 'Content-Length': body.length, ...auth }, body }
}

/** One upload through `agent`; its answer's code (`SUCCESS` or the refusal's) and its time. */
async function send(
  server: ServerProcess,
  agent: Agent,
  request: ReturnType<typeof upload>,
): Promise<{ code: string; ms: number }> {
  const began = performance.now()
  const res = await sendFrom(`${server.url}/ueditor?action=image`, {
    method: 'POST',
    ...request,
    agent,
    timeoutMs: 120_000,
  })
  let answer: { state?: string; code?: string } = {}
  try {
    answer = JSON.parse(res.body.toString())
  } catch {}
  const code = answer.state === 'SUCCESS' ? 'SUCCESS' : (answer.code ?? `HTTP ${res.status}`)
  return { code, ms: performance.now() - began }
}

/** The other client's 100 KB PNG, every PROBE_EVERY_MS until `until`: each upload's time. */
async function probe(server: ServerProcess, agent: Agent, until: number): Promise<number[]> {
  const photo = upload(png(184, 184, { noise: true }), 'photo.png', 'image/png', AUTHORIZATION)
  const runs: Promise<number>[] = []
  while (Date.now() < until) {
    runs.push(
      send(server, agent, photo).then((r) => {
        if (r.code !== 'SUCCESS') throw new Error(`the other client's upload: ${r.code}`)
        return r.ms
      }),
    )
    await sleep(PROBE_EVERY_MS)
  }
  return Promise.all(runs)
}

/**
 * Word pictures: the CPU one EMF's conversion to PNG costs (the server and the LibreOffice
 * processes it waited for), converted one at a time; then one client keeping IN_FLIGHT EMF
 * uploads in flight while another client uploads a 100 KB PNG every PROBE_EVERY_MS: how much
 * the flood adds to that upload's time. The flooding user is exempt from the upload limits, so
 * only the conversion queue (one LibreOffice at once, four waiting per client) holds it back.
 */
export async function wordScenario(p: Profile): Promise<Row[]> {
  if (SOFFICE === null)
    return [{ scenario: 'Word pictures (EMF via LibreOffice)', server: INSTALL_LIBREOFFICE }]
  return inTempDir(async (dir) => {
    const { emf } = await redEmf(dir, SOFFICE as string)
    const floodToken = randomBytes(24).toString('base64url')
    const config = ueditorConfig(join(dir, 'data'), {
      auth: { mode: 'tokens', tokens: [BENCH_TOKEN_ENTRY, `flood:${floodToken}`] },
      limits: { exemptUsers: [BENCH_USER, 'flood'] },
      images: { metafiles: { soffice: SOFFICE } },
    })
    return using(startUeditor(dir, config), async (server) => {
      const flooder = new Agent({ keepAlive: true, localAddress: FLOOD_ADDRESS })
      const other = new Agent({ keepAlive: false, localAddress: OTHER_CLIENT })
      try {
        const picture = upload(emf, 'chart.emf', 'image/x-emf', AUTHORIZATION)
        // Warm: the image library loaded, LibreOffice's files in the page cache.
        for (const r of [await send(server, other, picture)])
          if (r.code !== 'SUCCESS') throw new Error(`EMF upload: ${r.code}`)
        const count = p.smoke ? 2 : 10
        const cpuBefore = treeCpuMicros(server.pid)
        const wall: number[] = []
        for (let i = 0; i < count; i++) {
          const r = await send(server, other, picture)
          if (r.code !== 'SUCCESS') throw new Error(`EMF upload: ${r.code}`)
          wall.push(r.ms)
        }
        const cpuMsPerEmf = (treeCpuMicros(server.pid) - cpuBefore) / count / 1000

        const quiet = await probe(server, other, Date.now() + (p.smoke ? 1 : 4) * 1000)
        const seconds = p.smoke ? 4 : 20
        const until = Date.now() + seconds * 1000
        const floodRequest = upload(emf, 'chart.emf', 'image/x-emf', {
          Authorization: `Bearer ${floodToken}`,
        })
        const answers = new Map<string, number>()
        const floodOne = async () => {
          while (Date.now() < until) {
            const { code } = await send(server, flooder, floodRequest)
            answers.set(code, (answers.get(code) ?? 0) + 1)
          }
        }
        const flood = Promise.all(Array.from({ length: IN_FLIGHT }, floodOne))
        await sleep(500)
        const loaded = await probe(server, other, until)
        await flood

        const added = median(loaded) - median(quiet)
        const flooded = [...answers].map(([k, v]) => `${v} × ${k}`).join(', ')
        const rows: Row[] = [
          {
            scenario: 'Word picture: one EMF converted to PNG (LibreOffice), one at a time',
            server: `${fmt(cpuMsPerEmf)} ms CPU per EMF (server and LibreOffice), median ${fmt(median(wall))} ms each; ${count} converted`,
            figures: { cpuMsPerEmf, medianMs: median(wall), count },
          },
          {
            scenario: `Word picture flood: ${IN_FLIGHT} EMF uploads in flight from one client for ${seconds} s; another client's 100 KB PNG upload every ${PROBE_EVERY_MS} ms`,
            server: `median ${fmt(median(loaded))} ms (quiet: ${fmt(median(quiet))} ms, ${fmt(median(loaded) / median(quiet), 1)}x), p90 ${fmt(quantile(loaded, 0.9))} ms, max ${fmt(Math.max(...loaded))} ms over ${loaded.length} uploads; the flood: ${flooded}`,
            target: {
              what: 'median added by the flood',
              value: added,
              unit: 'ms',
              op: '<=',
              limit: ADDED_DELAY_LIMIT_MS,
            },
            figures: {
              addedMs: added,
              medianMs: median(loaded),
              quietMedianMs: median(quiet),
              p90Ms: quantile(loaded, 0.9),
              maxMs: Math.max(...loaded),
              ...Object.fromEntries([...answers].map(([k, v]) => [`flood_${k}`, v])),
            },
          },
        ]
        rows.push(...(await importRows(p, dir, server, other)))
        return rows
      } finally {
        flooder.destroy()
        other.destroy()
      }
    })
  })
}

const PAGES = 10

/** A document of PAGES pages, each a heading, a paragraph, a small table and a picture of its own. */
function pagesHtml(): string {
  // A picture of its own per page: the import stores a picture shown twice once.
  const picture = (n: number) =>
    `data:image/png;base64,${png(120 + n, 80, { noise: true }).toString('base64')}`
  const words = 'The quarter closed with steady orders and a shorter delivery time. '.repeat(12)
  const page = (n: number) =>
    `<h2${n > 1 ? ' style="page-break-before: always"' : ''}>Section ${n}</h2><p>${words}</p>` +
    `<table border="1"><tr><td>region</td><td>orders</td></tr><tr><td>north</td><td>${n * 17}</td></tr></table>` +
    `<p><img src="${picture(n)}" width="120" height="80"></p>`
  return `<html><body>${Array.from({ length: PAGES }, (_, i) => page(i + 1)).join('')}</body></html>`
}

/**
 * The Word import's cost: the CPU the server (and, for `.doc`, the LibreOffice it waited for)
 * spends per imported page of a PAGES-page document with a table and a picture on each page.
 */
async function importRows(
  p: Profile,
  dir: string,
  server: ServerProcess,
  agent: Agent,
): Promise<Row[]> {
  if (SOFFICE === null || !sofficeHasWriter(SOFFICE))
    return [{ scenario: 'Word import (.docx, .doc)', server: INSTALL_LIBREOFFICE }]
  const html = pagesHtml()
  const rows: Row[] = []
  for (const ext of ['docx', 'doc'] as const) {
    const bytes = await officeFile(dir, html, ext, SOFFICE)
    const { body, contentType } = multipartBody([
      {
        name: 'upfile',
        filename: `report.${ext}`,
        value: bytes,
        contentType: 'application/octet-stream',
      },
    ])
    const request = {
      method: 'POST',
      headers: { 'Content-Type': contentType, 'Content-Length': body.length, ...AUTHORIZATION },
      body,
      agent,
      timeoutMs: 120_000,
    }
    const importOnce = async () => {
      const began = performance.now()
      const res = await sendFrom(`${server.url}/ueditor?action=wordimport`, request)
      const answer = JSON.parse(res.body.toString()) as {
        state?: string
        code?: string
        files?: unknown[]
      }
      if (answer.state !== 'SUCCESS')
        throw new Error(`.${ext} import: ${answer.code ?? res.status}`)
      if (answer.files?.length !== PAGES)
        throw new Error(`.${ext} import stored ${answer.files?.length} pictures`)
      return performance.now() - began
    }
    await importOnce()
    const count = p.smoke ? 1 : 5
    const cpuBefore = treeCpuMicros(server.pid)
    const wall: number[] = []
    for (let i = 0; i < count; i++) wall.push(await importOnce())
    const cpuMsPerPage = (treeCpuMicros(server.pid) - cpuBefore) / count / PAGES / 1000
    rows.push({
      scenario: `Word import: a ${PAGES}-page .${ext} (a table and a picture per page)`,
      server: `${fmt(cpuMsPerPage)} ms CPU per page (server${ext === 'doc' ? ' and LibreOffice' : ''}), median ${fmt(median(wall))} ms per document; ${count} imported`,
      figures: { cpuMsPerPage, medianMs: median(wall), count },
    })
  }
  return rows
}
