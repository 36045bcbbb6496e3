import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { createLogger } from '../../src/shared/log.js'
import { eventually } from '../helpers/eventually.js'
import { blob, HTML, png } from '../helpers/fixtures.js'
import { rawSqlite } from '../helpers/sqlite.js'
import { startTestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'

/** A log destination that keeps every line. */
function collector() {
  const lines: string[] = []
  let rest = ''
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      const text = rest + chunk.toString('utf8')
      const parts = text.split('\n')
      rest = parts.pop() ?? ''
      lines.push(...parts.filter((l) => l.length > 0))
      done()
    },
  })
  return {
    stream,
    lines,
    records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
  }
}

function upload(url: string, file: Blob, name: string): Promise<Response> {
  const form = new FormData()
  form.append('upfile', file, name)
  return fetch(url, { method: 'POST', body: form })
}

/** Every sample of the Prometheus text, `name{labels}` → value. */
async function scrape(url: string, headers: HeadersInit = {}): Promise<Map<string, number>> {
  const res = await fetch(url, { headers })
  assert.equal(res.status, 200)
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/)
  const samples = new Map<string, number>()
  for (const line of (await res.text()).split('\n')) {
    const m = /^([a-z_:]+(?:\{[^}]*\})?) (\S+)$/.exec(line)
    if (m) samples.set(m[1] as string, Number(m[2]))
  }
  return samples
}

const sample = (s: Map<string, number>, key: string) => s.get(key) ?? 0

describe('logs', () => {
  test('every log line of a request carries its id, and the answer returns it', async (t) => {
    const log = collector()
    const srv = await startTestServer(
      t,
      { logLevel: 'debug' },
      { logger: createLogger({ level: 'debug', format: 'json', destination: log.stream }) },
    )
    const res = await fetch(srv.action('nope'), { headers: { 'X-Request-Id': 'req-42.a' } })
    assert.equal(res.headers.get('x-request-id'), 'req-42.a')
    await res.text()
    const lines = log.records().filter((r) => r.reqId === 'req-42.a')
    // The refusal logged by the editor and the access line.
    assert.ok(
      lines.some((r) => r.code === 'UE_ACTION_UNKNOWN'),
      JSON.stringify(lines),
    )
    const access = lines.find((r) => r.msg === 'request')
    assert.deepEqual(
      { method: access?.method, path: access?.path, status: access?.status, level: access?.level },
      { method: 'GET', path: '/ueditor', status: 200, level: 'info' },
    )
    assert.equal(typeof access?.time, 'string')
  })

  test('the access line names the client: the peer, or behind a trusted proxy the address it forwards', async (t) => {
    const log = collector()
    const srv = await startTestServer(
      t,
      { http: { trustProxy: ['loopback'] } },
      { logger: createLogger({ level: 'info', format: 'json', destination: log.stream }) },
    )
    await (await fetch(srv.action('config'), { headers: { 'X-Request-Id': 'direct' } })).text()
    await (
      await fetch(srv.action('config'), {
        headers: { 'X-Request-Id': 'proxied', 'X-Forwarded-For': '203.0.113.9' },
      })
    ).text()
    const clientOf = (id: string) =>
      log.records().find((r) => r.reqId === id && r.msg === 'request')?.client
    assert.equal(clientOf('direct'), '127.0.0.1')
    assert.equal(clientOf('proxied'), '203.0.113.9')
  })

  test('the audit lines an upload and a refused credential write carry their own request ids', async (t) => {
    const log = collector()
    const srv = await startTestServer(
      t,
      { auth: { tokens: ['alice:tok-alice-0123456789abcdef'] } },
      { logger: createLogger({ level: 'info', format: 'json', destination: log.stream }) },
    )
    const form = new FormData()
    form.append('upfile', blob(png(4, 4), 'image/png'), 'a.png')
    const stored = await fetch(srv.action('image'), {
      method: 'POST',
      body: form,
      headers: { 'X-Request-Id': 'req-upload', Authorization: 'Bearer tok-alice-0123456789abcdef' },
    })
    assert.equal((await stored.json()).state, 'SUCCESS')
    const refused = await fetch(srv.action('listImage'), {
      headers: { 'X-Request-Id': 'req-refused', Authorization: 'Bearer wrong-token' },
    })
    await refused.text()
    const records = log.records()
    const storedLine = records.find((r) => r.audit === 'upload')
    assert.equal(storedLine?.reqId, 'req-upload', JSON.stringify(records))
    const authLine = records.find((r) => r.audit === 'auth')
    assert.equal(authLine?.reqId, 'req-refused', JSON.stringify(records))
    assert.equal(authLine?.reason, 'invalid')
  })

  test('a missing or insane X-Request-Id is replaced by a fresh id', async (t) => {
    const log = collector()
    const srv = await startTestServer(t, {}, { logger: createLogger({ destination: log.stream }) })
    const ids: string[] = []
    for (const header of [undefined, 'x'.repeat(200), 'a b', '{"inject":1}']) {
      const res = await fetch(
        srv.action('config'),
        header === undefined ? {} : { headers: { 'X-Request-Id': header } },
      )
      await res.text()
      ids.push(res.headers.get('x-request-id') ?? '')
    }
    for (const id of ids) assert.match(id, /^[0-9a-f-]{36}$/)
    assert.equal(new Set(ids).size, ids.length)
    assert.deepEqual(
      log
        .records()
        .filter((r) => r.msg === 'request')
        .map((r) => r.reqId),
      ids,
    )
  })

  test('tokens, passwords and cookies never reach the log', async (t) => {
    const log = collector()
    const logger = createLogger({ level: 'debug', format: 'json', destination: log.stream })
    const srv = await startTestServer(t, { logLevel: 'debug' }, { logger })
    const secrets = ['tok-AAAA1111', 'tok-BBBB2222', 'pw-CCCC3333', 'tok-DDDD4444', 'ck-EEEE5555']
    await (
      await fetch(`${srv.action('listImage')}&access_token=${secrets[0]}&token=${secrets[1]}`, {
        headers: { Authorization: `Bearer ${secrets[3]}`, Cookie: `sid=${secrets[4]}` },
      })
    ).text()
    await (
      await fetch(`${srv.url}/materials/admin/categories?token=${secrets[1]}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${secrets[3]}`, 'Content-Type': 'application/json' },
        body: '{}',
      })
    ).text()
    // What the code itself might log: a connection error quoting a URL, request headers, config.
    logger.error(
      {
        err: new Error(`connect to postgres://app:${secrets[2]}@db.internal:5432/ue failed`),
        headers: { authorization: `Bearer ${secrets[3]}`, cookie: `sid=${secrets[4]}` },
        url: `https://img.example.com/a.png?X-Amz-Signature=${secrets[0]}`,
        storage: { secretAccessKey: secrets[2] },
        materials: { tokens: [secrets[1]] },
        deep: { config: { storage: { s3: { secretAccessKey: secrets[2] } } } },
        password: secrets[2],
      },
      `request with Authorization: Bearer ${secrets[3]}`,
    )
    const text = log.lines.join('\n')
    assert.ok(log.lines.length >= 3)
    for (const secret of secrets) assert.ok(!text.includes(secret), `${secret} leaked:\n${text}`)
    assert.match(text, /postgres:\/\/app:\[Redacted\]@db\.internal/)
  })

  test('the pretty format writes readable lines, the json format one JSON object a line', () => {
    const json = collector()
    createLogger({ format: 'json', destination: json.stream }).info({ a: 1 }, 'hello')
    assert.deepEqual(
      json.records().map((r) => [r.level, r.msg, r.a]),
      [['info', 'hello', 1]],
    )
    const readable = collector()
    createLogger({ format: 'pretty', destination: readable.stream }).warn({ a: 1 }, 'hello')
    assert.equal(readable.lines.length > 0, true)
    assert.match(readable.lines[0] ?? '', /WARN.*hello/)
    assert.ok(!(readable.lines[0] ?? '').startsWith('{'))
  })
})

describe('metrics', () => {
  test('counters move as requests are made through the real server', async (t) => {
    const srv = await startTestServer(t)
    const metricsUrl = `${srv.url}/metrics`
    const before = await scrape(metricsUrl)

    const ok = await upload(srv.action('image'), blob(png(8, 8), 'image/png'), 'a.png')
    const stored = (await ok.json()) as { state: string; size: number }
    assert.equal(stored.state, 'SUCCESS')
    const refused = await upload(srv.action('image'), blob(HTML, 'image/jpeg'), 'a.jpg')
    assert.equal(((await refused.json()) as { code: string }).code, 'UE_CONTENT_MISMATCH')
    await (await fetch(srv.action('nope'))).text()
    const caught = await fetch(srv.action('catch'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `source[]=${encodeURIComponent('http://127.0.0.1:9/a.png')}`,
    })
    const entry = ((await caught.json()) as { list: { code: string }[] }).list[0]
    const denied = await fetch(`${srv.url}/materials/admin/categories`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"name":"x"}',
    })
    assert.equal(denied.status, 401)
    assert.equal(
      ((await denied.json()) as { error: { code: string } }).error.code,
      'UE_UNAUTHORIZED',
    )

    const after = await scrape(metricsUrl)
    const moved = (key: string) => sample(after, key) - sample(before, key)
    assert.equal(moved('ueditor_editor_requests_total{action="image",outcome="SUCCESS"}'), 1)
    assert.equal(
      moved('ueditor_editor_requests_total{action="image",outcome="UE_CONTENT_MISMATCH"}'),
      1,
    )
    assert.equal(
      moved('ueditor_editor_requests_total{action="unknown",outcome="UE_ACTION_UNKNOWN"}'),
      1,
    )
    assert.equal(moved('ueditor_refusals_total{area="editor",code="UE_CONTENT_MISMATCH"}'), 1)
    assert.equal(moved('ueditor_refusals_total{area="materials",code="UE_UNAUTHORIZED"}'), 1)
    assert.equal(moved('ueditor_stored_bytes_total{action="image"}'), stored.size)
    assert.equal(moved(`ueditor_catch_sources_total{outcome="${entry?.code}"}`), 1)
    assert.equal(moved('ueditor_image_pipeline_duration_seconds_count{outcome="SUCCESS"}'), 1)
    assert.equal(
      moved('ueditor_editor_request_duration_seconds_count{action="image",outcome="SUCCESS"}'),
      1,
    )
    assert.equal(moved('ueditor_http_requests_total{route="editor",method="POST",status="200"}'), 3)
    assert.equal(
      moved('ueditor_http_requests_total{route="materials",method="POST",status="401"}'),
      1,
    )
    assert.equal(sample(after, 'ueditor_uploads_in_flight'), 0)
    assert.ok(sample(after, 'process_resident_memory_bytes') > 0)
  })

  test('an upload being received shows in ueditor_uploads_in_flight', async (t) => {
    const srv = await startTestServer(t)
    const metricsUrl = `${srv.url}/metrics`
    let sendRest: (() => void) | undefined
    const head = Buffer.from(
      '--b\r\nContent-Disposition: form-data; name="upfile"; filename="a.png"\r\n' +
        'Content-Type: image/png\r\n\r\n',
    )
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(head)
        sendRest = () => {
          controller.enqueue(Buffer.concat([png(4, 4), Buffer.from('\r\n--b--\r\n')]))
          controller.close()
        }
      },
    })
    const pending = fetch(srv.action('image'), {
      method: 'POST',
      headers: { 'Content-Type': 'multipart/form-data; boundary=b' },
      body,
      // @ts-expect-error: Node's fetch needs `duplex` for streamed bodies; the DOM types lack it.
      duplex: 'half',
    })
    const during = await eventually(
      async () => sample(await scrape(metricsUrl), 'ueditor_uploads_in_flight'),
      { until: (n) => n !== 0, timeoutMs: 10_000, what: 'the upload counted in flight' },
    )
    assert.equal(during, 1)
    sendRest?.()
    assert.equal(((await (await pending).json()) as { state: string }).state, 'SUCCESS')
    assert.equal(sample(await scrape(metricsUrl), 'ueditor_uploads_in_flight'), 0)
  })

  test('database failures are counted by operation', async (t) => {
    const srv = await startTestServer(t)
    const metricsUrl = `${srv.url}/metrics`
    const { index } = srv.ue.config
    assert.ok(index.driver === 'sqlite')
    const raw = await rawSqlite(index.file)
    // Every listing starts with the counts.
    raw.exec('DROP TABLE file_counts')
    raw.close()
    const res = await fetch(srv.action('listImage'))
    assert.equal(((await res.json()) as { code: string }).code, 'UE_INDEX_FAILED')
    const after = await scrape(metricsUrl)
    assert.equal(
      sample(after, 'ueditor_dependency_errors_total{dependency="database",operation="list"}'),
      1,
    )
    assert.equal(sample(after, 'ueditor_refusals_total{area="editor",code="UE_INDEX_FAILED"}'), 1)
  })

  test('with metrics.token a scrape needs that Bearer token; metrics.enabled false removes the path', async (t) => {
    const token = 'metrics-token-0123456789'
    const srv = await startTestServer(t, { metrics: { token } })
    const attempts: Record<string, string>[] = [
      {},
      { Authorization: 'Bearer wrong-token-0123456789' },
      { Authorization: token },
    ]
    for (const headers of attempts) {
      const res = await fetch(`${srv.url}/metrics`, { headers })
      assert.equal(res.status, 401)
      assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="metrics"')
      assert.doesNotMatch(await res.text(), /ueditor_/)
    }
    const samples = await scrape(`${srv.url}/metrics`, { Authorization: `Bearer ${token}` })
    assert.ok(samples.has('ueditor_uploads_in_flight'))

    const off = await startTestServer(t, { metrics: { enabled: false } })
    const res = await fetch(`${off.url}/metrics`)
    assert.equal(res.status, 404)
    await res.text()
  })
})
