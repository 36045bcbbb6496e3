import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type AiUpstream, startAiUpstream } from '../helpers/ai-upstream.js'
import { MP3, MP4, PDF, png } from '../helpers/fixtures.js'
import { multipartBody, type Part } from '../helpers/multipart.js'
import { type OriginServer, originImages, startOriginServer } from '../helpers/origin-server.js'
import {
  type EditorAnswer as Answer,
  postFrom,
  type SendInit,
  sendFrom,
} from '../helpers/post-from.js'
import { after, before, describe, test } from '../helpers/test.js'

// Tests run from packages/server/dist/tests/http; the examples build to examples/dist.
const EXAMPLES = fileURLToPath(new URL('../../../../../examples/dist/', import.meta.url))
const FRAMEWORKS = ['express', 'koa', 'fastify', 'node', 'nestjs'] as const
const UPLOADS_PER_MINUTE = 6

interface Example {
  url: string
  child: ChildProcess
  dataDir: string
}

// An image origin for `catch` and an AI upstream, shared by every example app.
const cleanups: (() => Promise<void>)[] = []
let origin: OriginServer
let upstream: AiUpstream
before(async () => {
  const t = { after: (fn: () => Promise<void>) => void cleanups.push(fn) }
  origin = await startOriginServer(t, await originImages())
  upstream = await startAiUpstream(t)
})
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

/**
 * The variables of the command the example's first lines give to run it
 * (`UEDITOR_AUTH=none node examples/dist/<name>/app.js`), so the test runs what they say.
 */
function documentedEnv(name: string): Record<string, string> {
  const source = readFileSync(join(EXAMPLES, '..', name, 'app.ts'), 'utf8')
  const m = new RegExp(`\`((?:[A-Z_]+=\\S+ )*)node examples/dist/${name}/app\\.js\``).exec(source)
  assert.ok(m, `examples/${name}/app.ts says how to run it`)
  return Object.fromEntries(
    (m[1] as string)
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map((pair) => pair.split('=', 2) as [string, string]),
  )
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
      editor: { videoMaxSize: 256 * 1024 * 1024 },
      catcher: { allowHosts: [origin.host] },
      ai: { baseUrl: upstream.baseUrl, apiKey: 'sk-example-apps-key-0123456789', model: 'm' },
      documents: { enabled: true },
    }),
  )
  const child = spawn(process.execPath, [join(EXAMPLES, name, 'app.js')], {
    env: {
      ...documentedEnv(name),
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

/** One request from 127.0.0.5 unless `init.from` says otherwise, answered whole. */
async function send(url: string, init: SendInit = {}) {
  const res = await sendFrom(url, { from: '127.0.0.5', ...init })
  return { ...res, type: String(res.headers['content-type'] ?? '') }
}

/** An answer of the editor endpoint: HTTP 200, JSON, with a `state` (never the host app's). */
async function editorAnswer(url: string, init?: SendInit) {
  const res = await send(url, init)
  assert.equal(res.status, 200, url)
  assert.match(res.type, /^application\/json/, url)
  const answer = JSON.parse(res.body.toString('utf8'))
  assert.equal(typeof answer.state, 'string', `${url}: ${res.body}`)
  return answer
}

/** A stored file as the editor resolves it: `*UrlPrefix` + the result's `url`, against the page. */
interface StoredUrl {
  url: string
  /** The Content-Type it must be served with. */
  type: RegExp
}

type ConfigAnswer = Record<string, unknown> & {
  formulaConfig: { imageUrlTemplate: string }
  ai: { driverConfig: { url: string } }
}

/**
 * Every URL the config answer names, fetched through the app at `base` (the page's origin) with
 * the editor endpoint at `serverUrl`: each action, the stored files of each `*UrlPrefix` (after
 * an upload, a capture or a listing of that kind), the formula images, the AI dialog's URL, and
 * the loaders the docs name. Each must be answered by the editor backend, not the host app.
 */
async function checkEveryNamedUrl(base: string, serverUrl: string, imageOrigin: OriginServer) {
  const answer = await send(`${serverUrl}?action=config`)
  assert.equal(answer.status, 200)
  const config = JSON.parse(answer.body.toString('utf8')) as ConfigAnswer
  const action = (key: string) => `${serverUrl}?action=${encodeURIComponent(String(config[key]))}`
  // Each stored file comes from a client of its own, so the upload limit never gets in the way.
  let clients = 10
  const client = () => `127.0.0.${clients++}`

  const actionKeys = Object.keys(config).filter((k) => k.endsWith('ActionName'))
  assert.ok(actionKeys.length >= 9, actionKeys.join())
  for (const key of actionKeys) await editorAnswer(action(key))

  const upload = async (key: string, field: string, name: string, type: string, bytes: Buffer) => {
    const { body, contentType } = multipartBody([
      { name: String(config[field]), value: bytes, filename: name, contentType: type },
    ])
    const answer = await editorAnswer(action(key), {
      method: 'POST',
      headers: { 'Content-Type': contentType },
      body,
      from: client(),
    })
    assert.equal(answer.state, 'SUCCESS', `${key}: ${JSON.stringify(answer)}`)
    return String(answer.url)
  }
  const form = (key: string, body: string) =>
    editorAnswer(action(key), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body,
      from: client(),
    })
  const scrawl = await form(
    'scrawlActionName',
    `${config.scrawlFieldName}=${encodeURIComponent(png(6, 6).toString('base64'))}`,
  )
  const captured = await form(
    'catcherActionName',
    `${config.catcherFieldName}[]=${encodeURIComponent(imageOrigin.url('/a.png'))}`,
  )
  assert.equal(captured.list[0]?.state, 'SUCCESS', JSON.stringify(captured))
  const stored: Record<string, StoredUrl[]> = {
    imageUrlPrefix: [
      {
        url: await upload('imageActionName', 'imageFieldName', 'a.png', 'image/png', png(4, 4)),
        type: /^image\/png$/,
      },
    ],
    snapscreenUrlPrefix: [
      {
        url: await upload('snapscreenActionName', 'imageFieldName', 'snap.png', 'image/png', png()),
        type: /^image\/png$/,
      },
    ],
    scrawlUrlPrefix: [{ url: scrawl.url, type: /^image\/png$/ }],
    catcherUrlPrefix: [{ url: captured.list[0].url, type: /^image\/png$/ }],
    videoUrlPrefix: [
      {
        url: await upload('videoActionName', 'videoFieldName', 'a.mp4', 'video/mp4', MP4),
        type: /^video\/mp4$/,
      },
    ],
    audioUrlPrefix: [
      {
        url: await upload('audioActionName', 'audioFieldName', 'a.mp3', 'audio/mpeg', MP3),
        type: /^audio\/mpeg$/,
      },
    ],
    fileUrlPrefix: [
      {
        url: await upload('fileActionName', 'fileFieldName', 'a.pdf', 'application/pdf', PDF),
        type: /^application\/pdf$/,
      },
    ],
  }
  for (const [prefix, list, type] of [
    ['imageManagerUrlPrefix', 'imageManagerActionName', /^image\//],
    ['fileManagerUrlPrefix', 'fileManagerActionName', /./],
  ] as const) {
    const listed = await editorAnswer(`${action(list)}&start=0&size=100`)
    assert.ok(listed.list.length >= 1, `${list} lists what was stored`)
    stored[prefix] = listed.list.map((e: { url: string }) => ({ url: e.url, type }))
  }
  const prefixes = Object.keys(config).filter((k) => k.endsWith('UrlPrefix'))
  assert.deepEqual(prefixes.sort(), Object.keys(stored).sort(), 'every *UrlPrefix has a check')
  for (const prefix of prefixes)
    for (const file of stored[prefix] ?? []) {
      const url = new URL(`${config[prefix]}${file.url}`, `${base}/`).href
      const served = await send(url)
      assert.equal(served.status, 200, `${prefix}: ${url}`)
      assert.match(served.type, file.type, `${prefix}: ${url}`)
    }

  const tex = encodeURIComponent('\\frac{1}{2}')
  const formula = new URL(config.formulaConfig.imageUrlTemplate.replace('{}', tex), `${base}/`)
  const svg = await send(formula.href)
  assert.equal(svg.status, 200, formula.href)
  assert.match(svg.type, /^image\/svg\+xml/, formula.href)
  assert.match(svg.body.toString('utf8'), /<svg/)

  // The other ways to upload the answer names: each must be served through the mount too.
  const uploadUrls: Record<string, (url: string) => Promise<void>> = {
    uploadTusUrl: (url) => tusRoundTrip(url, client()),
    // Named only with S3 storage: Uppy's simple-upload parameters through the mount.
    uploadDirectUrl: async (url) => {
      const query = 'filename=a.png&type=image%2Fpng&metadata%5Bcategory%5D=image'
      const res = await send(`${url}/s3/params?${query}`, { from: client() })
      assert.equal(res.status, 200, url)
      assert.match(JSON.parse(res.body.toString('utf8')).fields.key, /^\.direct\//, url)
    },
  }
  const named = Object.keys(config).filter((k) => /^upload\w*Url$/.test(k))
  for (const key of named) assert.ok(key in uploadUrls, `${key}: every upload URL has a check`)
  for (const key of named) await uploadUrls[key]?.(new URL(String(config[key]), `${base}/`).href)

  const ai = new URL(config.ai.driverConfig.url, `${base}/`).href
  const stream = await send(ai, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ systemPrompt: '翻译成英文', prompt: '你好' }),
  })
  assert.equal(stream.status, 200, ai)
  assert.match(stream.type, /^text\/event-stream/, ai)
  assert.match(stream.body.toString('utf8'), /"data":"Hello"/)

  // The loaders and the designer page the docs name, and the operational paths.
  for (const [path, type] of [
    ['/materials/loaders.js', /^text\/javascript/],
    ['/materials/loaders.iife.js', /^text\/javascript/],
    ['/examples/designer.html', /^text\/html/],
    ['/metrics', /^text\/plain; version=0\.0\.4/],
    ['/readyz', /^application\/json/],
  ] as const) {
    const res = await send(`${base}${path}`)
    assert.equal(res.status, 200, path)
    assert.match(res.type, type, path)
  }
}

/** A tus creation, a PATCH of the whole file and a HEAD, all through the mount at `url`. */
async function tusRoundTrip(url: string, from: string): Promise<void> {
  const meta = (v: string) => Buffer.from(v).toString('base64')
  const created = await send(url, {
    method: 'POST',
    from,
    headers: {
      'Tus-Resumable': '1.0.0',
      'Upload-Length': PDF.length,
      'Upload-Metadata': `filename ${meta('notes.pdf')},category ${meta('file')}`,
    },
  })
  assert.equal(created.status, 201, `${url}: ${created.body}`)
  const at = new URL(String(created.headers.location), url).href
  const done = await send(at, {
    method: 'PATCH',
    from,
    headers: {
      'Tus-Resumable': '1.0.0',
      'Upload-Offset': 0,
      'Content-Type': 'application/offset+octet-stream',
    },
    body: PDF,
  })
  assert.equal(done.status, 200, `${at}: ${done.body}`)
  assert.equal(JSON.parse(done.body.toString('utf8')).state, 'SUCCESS', String(done.body))
  const head = await send(at, { method: 'HEAD', from, headers: { 'Tus-Resumable': '1.0.0' } })
  assert.equal(head.headers['upload-offset'], String(PDF.length), at)
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

    test('saves, reads and deletes a document through the documents mount, and lists its images', async () => {
      const up = await postFrom(editor('action=image'), image(), '127.0.0.90')
      assert.equal(up.state, 'SUCCESS')
      const doc = `${ex.url}/documents/post-${name}`
      const saved = await fetch(doc, {
        method: 'PUT',
        headers: { 'Content-Type': 'text/html' },
        body: `<p><img src="${up.url}" onerror="alert(1)"></p>`,
      })
      assert.equal(saved.status, 200)
      assert.deepEqual(await saved.json(), {
        html: `<p><img src="${up.url}" /></p>`,
        files: [up.url],
        foreign: [],
      })
      assert.deepEqual((await (await fetch(doc)).json()).files, [up.url])
      const listed = await (
        await fetch(editor(`action=listImage&document=post-${name}&start=0&size=20`))
      ).json()
      assert.deepEqual(
        listed.list.map((e: { url: string }) => e.url),
        [up.url],
      )
      assert.equal((await fetch(doc, { method: 'DELETE' })).status, 200)
      assert.equal((await fetch(doc)).status, 404)
    })

    test('serves every URL the config answer names: each action, each stored-file prefix, resumable uploads, formula images, the AI dialog and the loaders', async () => {
      await checkEveryNamedUrl(ex.url, `${ex.url}/ueditor`, origin)
    })

    test('passes every other path on to the app, whose own routes keep their body parsers', async () => {
      const elsewhere = await send(`${ex.url}/elsewhere`)
      assert.doesNotMatch(elsewhere.body.toString('utf8'), /UE_NOT_FOUND|"state"/)
      if (name === 'koa' || name === 'node')
        assert.deepEqual(JSON.parse(elsewhere.body.toString('utf8')), { app: name })
      else {
        const echo = await send(`${ex.url}/api/echo`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ hello: '世界' }),
        })
        assert.deepEqual(JSON.parse(echo.body.toString('utf8')), { hello: '世界' })
      }
    })

    test('streams a 200 MB video to storage without holding it in memory', async () => {
      // Even with a small young generation the app's resident size grows by 30-50 MB, whatever
      // the file's size (measured with 100 and 300 MB on Node 20-26); a copy of the file would
      // grow with it. At 200 MB the two are far apart.
      const size = 200 * 1024 * 1024
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
      assert.ok(
        grew < size / 2 / 1024 / 1024,
        `the app's resident memory grew by ${grew.toFixed(1)} MB`,
      )
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
