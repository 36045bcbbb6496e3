import { mkdir } from 'node:fs/promises'
import { request } from 'node:http'
import { join } from 'node:path'
import { MP4 } from '../../tests/helpers/fixtures.js'
import {
  AUTHORIZATION,
  fmt,
  inTempDir,
  type Profile,
  settle,
  ueditorConfig,
  using,
} from '../context.js'
import { startBare, startUeditor } from '../processes.js'
import { peakRssRow, type Row } from '../report.js'

const MB = 1024 * 1024

interface Sent {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
  ms: number
}

/**
 * One request whose body is `size` bytes of a video (an MP4 header, then zeros), written a
 * megabyte at a time with back-pressure: neither side ever holds it whole.
 */
function streamVideo(
  url: string,
  method: string,
  headers: Record<string, string>,
  size: number,
): Promise<Sent> {
  const target = new URL(url)
  const chunk = Buffer.alloc(MB)
  const first = Buffer.alloc(Math.min(MB, size))
  MP4.copy(first)
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method,
        headers: { ...headers, 'Content-Length': String(size) },
      },
      (res) => {
        const parts: Buffer[] = []
        res.on('data', (c: Buffer) => parts.push(c))
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(parts).toString('utf8'),
            ms: performance.now() - started,
          }),
        )
      },
    )
    req.on('error', reject)
    let left = size - first.length
    req.write(first)
    const pump = () => {
      while (left > 0) {
        const n = Math.min(left, MB)
        left -= n
        if (!req.write(n === MB ? chunk : chunk.subarray(0, n))) {
          req.once('drain', pump)
          return
        }
      }
      req.end()
    }
    pump()
  })
}

function expectOk(sent: Sent, what: string): Sent {
  if (sent.status < 200 || sent.status > 299 || !sent.body.includes('"state":"SUCCESS"'))
    throw new Error(`${what} answered ${sent.status}: ${sent.body.slice(0, 300)}`)
  return sent
}

/**
 * One upload of `resumable.bytes` through tus (a creation, then one PATCH of every byte, which
 * ends with the upload stored and its result answered) against the bare server streaming the
 * same body to disk, in MB/s; and the server's peak RSS, which must not grow with the file.
 */
export function resumableUploadScenarios(p: Profile): Promise<Row[]> {
  const size = p.resumable.bytes
  return inTempDir(async (dir): Promise<Row[]> => {
    const bareFolder = join(dir, 'bare')
    await mkdir(bareFolder, { recursive: true })
    const bare = await using(startBare(['disk', bareFolder]), async (b) =>
      expectOk(
        await streamVideo(`${b.url}/ueditor?action=video`, 'POST', {}, size),
        'the bare server',
      ),
    )
    await settle()
    const config = ueditorConfig(join(dir, 'tus'), { editor: { videoMaxSize: size } })
    const measured = await using(startUeditor(dir, config), async (s) => {
      const started = performance.now()
      const meta = (v: string) => Buffer.from(v).toString('base64')
      const created = await fetch(`${s.url}/tus`, {
        method: 'POST',
        headers: {
          ...AUTHORIZATION,
          'Tus-Resumable': '1.0.0',
          'Upload-Length': String(size),
          'Upload-Metadata': `filename ${meta('clip.mp4')},category ${meta('video')}`,
        },
      })
      const location = created.headers.get('location')
      if (created.status !== 201 || !location)
        throw new Error(`the tus creation answered ${created.status}: ${await created.text()}`)
      const done = expectOk(
        await streamVideo(
          new URL(location, s.url).href,
          'PATCH',
          {
            ...AUTHORIZATION,
            'Tus-Resumable': '1.0.0',
            'Upload-Offset': '0',
            'Content-Type': 'application/offset+octet-stream',
          },
          size,
        ),
        'the final PATCH',
      )
      return { ms: performance.now() - started, patchMs: done.ms, peakRss: s.peakRssBytes() }
    })
    await settle()
    const mbPerSecond = (ms: number) => size / MB / (ms / 1000)
    const label = `${fmt(size / MB)} MB upload through tus (creation + one PATCH + the ending)`
    return [
      {
        scenario: label,
        server: `${fmt(mbPerSecond(measured.ms))} MB/s`,
        baseline: `${fmt(mbPerSecond(bare.ms))} MB/s`,
        target: {
          what: 'MB/s vs bare',
          value: bare.ms / measured.ms,
          unit: 'x',
          op: '>=',
          limit: 0.8,
        },
        figures: {
          mbPerSecond: mbPerSecond(measured.ms),
          patchMbPerSecond: mbPerSecond(measured.patchMs),
          bareMbPerSecond: mbPerSecond(bare.ms),
        },
      },
      peakRssRow(`peak RSS, one ${fmt(size / MB)} MB upload through tus`, measured.peakRss),
    ]
  })
}
