/**
 * Benchmarks with targets (`npm run bench`). Loopback only; every loop is bounded in count.
 * Prints one line per measurement and exits non-zero when a target is missed.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { startServer } from '../src/standalone/serve.js'
import { png } from '../tests/helpers/fixtures.js'
import { multipartBody } from '../tests/helpers/multipart.js'

interface Result {
  name: string
  value: number
  unit: string
  target: number
  better: 'higher' | 'lower'
}

const results: Result[] = []
const record = (r: Result) => {
  results.push(r)
  const ok = r.better === 'higher' ? r.value >= r.target : r.value <= r.target
  console.log(
    `${ok ? 'ok  ' : 'MISS'} ${r.name.padEnd(44)} ${r.value.toFixed(1).padStart(10)} ${r.unit.padEnd(8)} (target ${r.better === 'higher' ? '>=' : '<='} ${r.target})`,
  )
}

async function timed<T>(n: number, concurrency: number, fn: (i: number) => Promise<T>) {
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await fn(next++)
    }),
  )
  return performance.now() - started
}

/** Streams `total` bytes of a multipart upload without holding them in memory. */
function streamUpload(url: string, total: number): Promise<{ state: string }> {
  const boundary = 'benchboundary'
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.mp4"\r\nContent-Type: video/mp4\r\n\r\n`,
  )
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
  const mp4 = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypmp42\0\0\0\0mp42isom')])
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      headers: {
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        'Content-Length': head.length + total + tail.length,
      },
    })
    req.on('response', (res) => {
      let text = ''
      res.on('data', (c) => {
        text += c
      })
      res.on('end', () => resolve(JSON.parse(text)))
    })
    req.on('error', reject)
    req.write(head)
    const chunk = Buffer.alloc(1024 * 1024)
    let sent = 0
    const pump = () => {
      while (sent < total) {
        const piece = sent === 0 ? Buffer.concat([mp4, chunk.subarray(mp4.length)]) : chunk
        const part = piece.subarray(0, Math.min(piece.length, total - sent))
        sent += part.length
        if (!req.write(part)) return void req.once('drain', pump)
      }
      req.end(tail)
    }
    pump()
  })
}

const dataDir = await mkdtemp(join(tmpdir(), 'ueditor-bench-'))
const server = await startServer({
  env: {},
  config: {
    dataDir,
    logLevel: 'silent',
    http: { port: 0 },
    editor: { videoMaxSize: 200 * 1024 * 1024, imageCompressEnable: false },
  },
})
try {
  const configUrl = `${server.url}/ueditor?action=config`
  await fetch(configUrl).then((r) => r.text())
  const configMs = await timed(2000, 16, () => fetch(configUrl).then((r) => r.arrayBuffer()))
  record({
    name: 'config requests per second',
    value: 2000 / (configMs / 1000),
    unit: 'req/s',
    target: 800,
    better: 'higher',
  })

  const image = png(256, 256, { noise: true })
  const uploadMs = await timed(200, 8, async (i) => {
    const { body, contentType } = multipartBody([
      { name: 'upfile', filename: `b${i}.png`, value: image },
    ])
    const res = await fetch(`${server.url}/ueditor?action=image`, {
      method: 'POST',
      body,
      headers: { 'Content-Type': contentType },
    })
    const answer = (await res.json()) as { state: string }
    if (answer.state !== 'SUCCESS') throw new Error(`upload failed: ${JSON.stringify(answer)}`)
  })
  record({
    name: 'image uploads (200 KB PNG) per second',
    value: 200 / (uploadMs / 1000),
    unit: 'req/s',
    target: 50,
    better: 'higher',
  })

  const listMs = await timed(500, 8, (i) =>
    fetch(`${server.url}/ueditor?action=listImage&start=${i % 150}&size=20`).then((r) =>
      r.arrayBuffer(),
    ),
  )
  record({
    name: 'listImage pages per second (200 entries)',
    value: 500 / (listMs / 1000),
    unit: 'req/s',
    target: 500,
    better: 'higher',
  })

  const rssBefore = process.memoryUsage().rss
  let peak = rssBefore
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss)
  }, 20)
  const size = 150 * 1024 * 1024
  const videoStarted = performance.now()
  const video = await streamUpload(`${server.url}/ueditor?action=video`, size)
  const videoMs = performance.now() - videoStarted
  clearInterval(sampler)
  if (video.state !== 'SUCCESS') throw new Error(`video upload failed: ${JSON.stringify(video)}`)
  record({
    name: '150 MB video upload throughput',
    value: size / 1024 / 1024 / (videoMs / 1000),
    unit: 'MB/s',
    target: 50,
    better: 'higher',
  })
  record({
    name: 'RSS growth during the 150 MB upload',
    value: (peak - rssBefore) / 1024 / 1024,
    unit: 'MB',
    target: 64,
    better: 'lower',
  })
} finally {
  await server.close()
  await rm(dataDir, { recursive: true, force: true })
}

const missed = results.filter((r) =>
  r.better === 'higher' ? r.value < r.target : r.value > r.target,
)
console.log(`\n${results.length - missed.length} passed, ${missed.length} failed`)
process.exit(missed.length > 0 ? 1 : 0)
