import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { MP4, png } from '../helpers/fixtures.js'
import type { Part } from '../helpers/multipart.js'
import { type EditorAnswer as Answer, postFrom } from '../helpers/post-from.js'

// Tests run from packages/server/dist/tests/http; the examples build to examples/dist.
const EXAMPLES = fileURLToPath(new URL('../../../../../examples/dist/', import.meta.url))
const FRAMEWORKS = ['express', 'koa', 'fastify', 'node', 'nestjs'] as const
const UPLOADS_PER_MINUTE = 6

interface Example {
  url: string
  child: ChildProcess
  dataDir: string
}

/** Starts `examples/<name>/app.ts` as its own process on 127.0.0.1:0, as a user would. */
async function startExample(name: string): Promise<Example> {
  const dataDir = await mkdtemp(join(tmpdir(), `ueditor-example-${name}-`))
  const configFile = join(dataDir, 'config.json')
  await writeFile(
    configFile,
    JSON.stringify({
      logLevel: 'silent',
      limits: { uploadsPerMinute: UPLOADS_PER_MINUTE, minFreeBytes: 0 },
      editor: { videoMaxSize: 200 * 1024 * 1024 },
    }),
  )
  const child = spawn(process.execPath, [join(EXAMPLES, name, 'app.js')], {
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      UEDITOR_CONFIG: configFile,
      UEDITOR_DATA_DIR: join(dataDir, 'data'),
      // Newer V8s let the young generation grow to tens of MB of short-lived chunks under a
      // fast stream before collecting; a small one makes RSS show what is retained, which is
      // what the memory check is about (docs/operations.md#memory).
      NODE_OPTIONS: '--max-semi-space-size=2',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${output}`)), 60_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8')
      const found = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
      if (found) {
        clearTimeout(timer)
        resolve(found[1] as string)
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited with ${code}:\n${output}`))
    })
  })
  return { url, child, dataDir }
}

async function stopExample(ex: Example): Promise<void> {
  if (ex.child.exitCode === null) {
    const exited = new Promise((r) => ex.child.once('exit', r))
    ex.child.kill('SIGTERM')
    const timer = setTimeout(() => ex.child.kill('SIGKILL'), 10_000)
    await exited
    clearTimeout(timer)
  }
  await rm(ex.dataDir, { recursive: true, force: true })
}

/** The resident set of a process, in bytes (Linux). */
function rss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1]
  return Number(kb) * 1024
}

const image = (): Part[] => [
  { name: 'upfile', value: png(4, 4), filename: 'a.png', contentType: 'image/png' },
]

/**
 * Streams a video of `size` bytes as one multipart part, a megabyte at a time with
 * back-pressure, so neither side needs it whole in memory.
 */
function streamVideo(url: string, size: number): Promise<Answer> {
  const boundary = '----adapterVideoBoundary'
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.mp4"\r\n` +
      'Content-Type: video/mp4\r\n\r\n',
  )
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
  const target = new URL(url)
  const chunk = Buffer.alloc(1024 * 1024)
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: 'POST',
        headers: {
          'Content-Type': `multipart/form-data; boundary=${boundary}`,
          'Content-Length': head.length + size + tail.length,
        },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c) => chunks.push(c))
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))))
      },
    )
    req.on('error', reject)
    req.write(head)
    req.write(MP4)
    let left = size - MP4.length
    const pump = () => {
      while (left > 0) {
        const n = Math.min(left, chunk.length)
        left -= n
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          req.once('drain', pump)
          return
        }
      }
      req.end(tail)
    }
    pump()
  })
}

for (const name of FRAMEWORKS) {
  describe(`the ${name} example app`, () => {
    let ex: Example
    const editor = (query: string) => `${ex.url}/ueditor?${query}`
    before(async () => {
      ex = await startExample(name)
    })
    after(async () => {
      if (ex) await stopExample(ex)
    })

    test('answers config as JSON and as JSONP through the adapter', async () => {
      const json = await fetch(editor('action=config'))
      assert.equal(json.status, 200)
      assert.equal((await json.json()).imageActionName, 'image')
      const jsonp = await fetch(editor('action=config&callback=ue_cb1'))
      assert.match(jsonp.headers.get('content-type') ?? '', /javascript/)
      assert.match(await jsonp.text(), /^\/\*\*\/ue_cb1\(\{"imageActionName":"image"/)
    })

    test('stores an image upload and serves it back through the files mount', async () => {
      const up = await postFrom(editor('action=image'), image())
      assert.equal(up.state, 'SUCCESS')
      const served = await fetch(`${ex.url}${up.url}`)
      assert.equal(served.status, 200)
      assert.equal(served.headers.get('content-type'), 'image/png')
      assert.deepEqual(Buffer.from(await served.arrayBuffer()).subarray(0, 8), png().subarray(0, 8))
    })

    test('stores a scrawl sent as url-encoded base64', async () => {
      const res = await fetch(editor('action=scrawl'), {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: `upfile=${encodeURIComponent(png(8, 8).toString('base64'))}`,
      })
      const up = (await res.json()) as Answer
      assert.equal(up.state, 'SUCCESS')
      assert.match(up.url ?? '', /^\/uploads\/scrawl\/.+\.png$/)
    })

    test('lists the stored images', async () => {
      const list = await (await fetch(editor('action=listImage&start=0&size=20'))).json()
      assert.equal(list.state, 'SUCCESS')
      assert.ok(list.list.length >= 1, 'the image uploaded before is listed')
    })

    test('answers a materials query through the materials mount', async () => {
      const res = await fetch(
        `${ex.url}/materials/materials?keyword=${encodeURIComponent('标题')}&page=1&pageSize=5`,
      )
      assert.equal(res.status, 200)
      const body = await res.json()
      assert.ok(body.items.length >= 1, 'the demo materials match')
      assert.ok(body.items.every((m: { name: string }) => m.name.includes('标题')))
    })

    test('streams a 100 MB video to storage without holding it in memory', async () => {
      const size = 100 * 1024 * 1024
      const pid = ex.child.pid as number
      const baseline = rss(pid)
      let peak = baseline
      const watch = setInterval(() => {
        peak = Math.max(peak, rss(pid))
      }, 20)
      let up: Answer
      try {
        up = await streamVideo(editor('action=video'), size)
      } finally {
        clearInterval(watch)
      }
      assert.equal(up.state, 'SUCCESS', JSON.stringify(up))
      assert.equal(up.size, size)
      const grew = (peak - baseline) / 1024 / 1024
      assert.ok(grew <= 50, `the app's resident memory grew by ${grew.toFixed(1)} MB`)
      const head = await fetch(`${ex.url}${up.url}`, { method: 'HEAD' })
      assert.equal(head.headers.get('content-length'), String(size))
    })

    test('counts the per-client upload limit against the client address seen through the adapter', async () => {
      const answers: Answer[] = []
      for (let i = 0; i <= UPLOADS_PER_MINUTE; i++)
        answers.push(await postFrom(editor('action=image'), image(), '127.0.0.3'))
      assert.deepEqual(
        answers.slice(0, UPLOADS_PER_MINUTE).map((a) => a.state),
        Array(UPLOADS_PER_MINUTE).fill('SUCCESS'),
      )
      assert.equal(answers.at(-1)?.code, 'UE_RATE_LIMITED')
      // Another address is another client, with its own allowance.
      assert.equal((await postFrom(editor('action=image'), image(), '127.0.0.4')).state, 'SUCCESS')
    })

    test('stops within the time a graceful shutdown allows', async () => {
      const started = Date.now()
      await stopExample(ex)
      assert.equal(
        ex.child.exitCode,
        0,
        `signal ${ex.child.signalCode} after ${Date.now() - started} ms`,
      )
    })
  })
}
