import assert from 'node:assert/strict'
import type { ServerConfigInput } from '../../src/config/schema.js'
import type {
  DialTarget,
  HostLookup,
  ResolvedAddress,
} from '../../src/ingest/remote/fetch-image.js'
import { createAddressPolicy, isPublicAddress } from '../../src/ingest/remote/guard.js'
import { recordingLogger } from '../helpers/auth.js'
import { type CatchEntry, catchUrls } from '../helpers/catch.js'
import {
  connectLoopback,
  type OriginImages,
  type OriginServer,
  originImages,
  startInternalService,
  startOriginServer,
} from '../helpers/origin-server.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { before, describe, test } from '../helpers/test.js'

/**
 * Stands for "somewhere on the internet". It is never dialled: the stub connector below the
 * guard routes it to the loopback fixture. (TEST-NET addresses cannot play this part, since
 * the policy rightly refuses them as reserved.)
 */
const PUBLIC = '93.184.215.14'

const FAILED = '抓取远程图片失败'
const NOT_HTTP = '链接不是http链接'

/** Test host names → what the injected resolver answers (a function answers per call). */
const NAMES: Record<string, ResolvedAddress[] | ((call: number) => ResolvedAddress[])> = {
  'public.test': [v4(PUBLIC)],
  localhost: [v4('127.0.0.1'), v6('::1')],
  'metadata.tencentyun.com': [v4('169.254.0.23')],
  'intranet.test': [v4('10.0.0.1')],
  'docker.test': [v4('172.17.0.1')],
  'cgnat.test': [v4('100.100.100.200')],
  'ula.test': [v6('fd00::1')],
  'mapped.test': [v6('::ffff:127.0.0.1')],
  'nat64.test': [v6('64:ff9b::7f00:1')],
  'unspecified.test': [v4('0.0.0.0')],
  // One public answer does not make a name safe: every answer is checked.
  'mixed.test': [v4(PUBLIC), v4('127.0.0.1')],
  'mixed-v6.test': [v4(PUBLIC), v6('::1')],
  // DNS rebinding: public while being "checked", loopback when dialled again (TTL 0).
  'rebind.test': (call) => (call === 1 ? [v4(PUBLIC)] : [v4('127.0.0.1')]),
}

function v4(address: string): ResolvedAddress {
  return { address, family: 4 }
}
function v6(address: string): ResolvedAddress {
  return { address, family: 6 }
}

interface Network {
  lookup: HostLookup
  connect: (target: DialTarget) => ReturnType<typeof connectLoopback>
  /** Every name looked up, in order. */
  lookups: string[]
  /** Every dial the guard let through to the connector. */
  dials: DialTarget[]
  /** Dials of anything the test did not expect to be allowed: must stay empty. */
  violations: DialTarget[]
}

/**
 * The injected resolver and the spy connector. The connector only ever opens loopback
 * sockets: PUBLIC (and, when listed, the allow-listed fixture) go to the fixture server;
 * anything else is recorded as a violation and refused, so a guard bug fails the test
 * instead of sending a packet anywhere.
 */
function fakeNetwork(origin: OriginServer, allowed: readonly string[] = []): Network {
  const lookups: string[] = []
  const dials: DialTarget[] = []
  const violations: DialTarget[] = []
  const calls = new Map<string, number>()
  return {
    lookups,
    dials,
    violations,
    async lookup(hostname) {
      lookups.push(hostname)
      const call = (calls.get(hostname) ?? 0) + 1
      calls.set(hostname, call)
      const answer = NAMES[hostname]
      if (!answer)
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
      return typeof answer === 'function' ? answer(call) : answer
    },
    async connect(target) {
      dials.push(target)
      const expected =
        target.address === PUBLIC || allowed.includes(`${target.address}:${target.port}`)
      if (!expected) {
        violations.push(target)
        throw new Error('the guard let a refused address through')
      }
      return connectLoopback(origin.port)
    },
  }
}

let images: OriginImages
before(async () => {
  images = await originImages()
})

async function setup(
  t: { after(fn: () => Promise<void>): void },
  o: {
    allowOrigin?: boolean
    config?: ServerConfigInput
    logger?: ReturnType<typeof recordingLogger>
  } = {},
): Promise<{ srv: TestServer; origin: OriginServer; net: Network }> {
  const origin = await startOriginServer(t, images)
  const allowHosts = o.allowOrigin ? [origin.host] : []
  const net = fakeNetwork(origin, allowHosts)
  const srv = await startTestServer(
    t,
    {
      ...o.config,
      // The guard itself is under test, not the local-domain list.
      editor: { catcherLocalDomain: [], ...o.config?.editor },
      catcher: { allowHosts, maxSources: 100, ...o.config?.catcher },
    },
    { remote: { lookup: net.lookup, connect: net.connect }, ...(o.logger && { logger: o.logger }) },
  )
  return { srv, origin, net }
}

async function catchList(srv: TestServer, sources: string[]): Promise<CatchEntry[]> {
  return (await catchUrls(srv, sources)).list
}

function assertAllRefused(entries: CatchEntry[], state: string) {
  for (const entry of entries) {
    assert.equal(entry.state, state, entry.source)
    assert.equal(entry.url, undefined, entry.source)
  }
}

describe('SSRF: catch never connects to a non-public address', () => {
  test('the fake network works: a public name is fetched through the stub connector', async (t) => {
    const { srv, origin, net } = await setup(t)
    const [entry] = await catchList(srv, ['http://public.test/a.png'])
    assert.equal(entry?.state, 'SUCCESS')
    assert.deepEqual(
      net.dials.map((d) => [d.address, d.port, d.hostname]),
      [[PUBLIC, 80, 'public.test']],
    )
    assert.equal(origin.requests[0]?.headers.host, 'public.test')
  })

  test('literal loopback, private, link-local, CGNAT, metadata and reserved addresses in every spelling are refused before any lookup or dial', async (t) => {
    const { srv, origin, net } = await setup(t)
    const sources = [
      `http://127.0.0.1:${origin.port}/a.png`,
      'http://127.0.0.2/',
      'http://[::1]/',
      'http://0.0.0.0/',
      'http://0/',
      'http://127.1/',
      'http://2130706433/',
      'http://0x7f.1/',
      'http://0x7f000001/',
      'http://0177.0.0.1/',
      'http://017700000001/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:7f00:1]/',
      'http://[0:0:0:0:0:ffff:127.0.0.1]/',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::ffff:169.254.169.254]/latest/meta-data/',
      'http://100.100.100.200/latest/meta-data/',
      'http://100.64.0.1/',
      'http://10.0.0.1/',
      'http://172.16.0.1/',
      'http://172.20.0.1/',
      'http://172.31.255.254/',
      'http://192.168.1.1/',
      'http://[fd00::1]/',
      'http://[fc00::1]/',
      'http://[fe80::1]/',
      'http://[64:ff9b::7f00:1]/',
      'http://[2002:7f00:1::]/',
      'http://[::]/',
      'http://224.0.0.1/',
      'http://255.255.255.255/',
      'http://192.0.2.1/',
      'http://198.51.100.7/',
      'http://203.0.113.10/',
      'https://127.0.0.1/a.png',
      `http://127.0.0.1:${origin.port}#@public.test/`,
      `http://127.0.0.1:${origin.port}\\@public.test/`,
      'http:/\\127.0.0.1/',
      ' http://127.0.0.1/',
      'HTTP://127.0.0.1/',
      '\thttp://127.0.0.1/\n',
    ]
    assertAllRefused(await catchList(srv, sources), FAILED)
    assert.deepEqual(net.lookups, [])
    assert.deepEqual(net.dials, [])
    assert.equal(origin.connections(), 0)
  })

  test('names that resolve to non-public addresses are refused after the lookup, before any dial', async (t) => {
    const { srv, origin, net } = await setup(t)
    const names = [
      'localhost',
      'metadata.tencentyun.com',
      'intranet.test',
      'docker.test',
      'cgnat.test',
      'ula.test',
      'mapped.test',
      'nat64.test',
      'unspecified.test',
      'mixed.test',
      'mixed-v6.test',
    ]
    const entries = await catchList(
      srv,
      names.map((n) => `http://${n}:${origin.port}/a.png`),
    )
    assertAllRefused(entries, FAILED)
    assert.deepEqual(net.lookups.sort(), [...names].sort())
    assert.deepEqual(net.dials, [])
  })

  test('a name that does not resolve fails with the same state as a refused one', async (t) => {
    const { srv, net } = await setup(t)
    const entries = await catchList(srv, ['http://nowhere.test/a.png', 'http://intranet.test/'])
    assertAllRefused(entries, FAILED)
    assert.deepEqual(
      entries.map((e) => e.code),
      ['UE_REMOTE_FAILED', 'UE_REMOTE_FAILED'],
    )
    assert.deepEqual(net.dials, [])
  })

  test('userinfo, non-http schemes and scheme-relative URLs are refused without a lookup', async (t) => {
    const { srv, origin, net } = await setup(t)
    const sources = [
      `http://public.test:x@127.0.0.1:${origin.port}/a.jpg`,
      'http://public.test@127.0.0.1/',
      'http://user:pass@public.test/a.png',
      'file:///etc/passwd',
      'ftp://127.0.0.1/',
      'gopher://127.0.0.1:6379/_INFO',
      'dict://127.0.0.1:11211/',
      'jar:http://public.test/a.jar!/',
      'javascript:alert(1)',
      `data:image/png;base64,${images.png.toString('base64')}`,
      `//127.0.0.1:${origin.port}/a.png`,
      'not a url',
      '',
    ]
    const entries = await catchList(srv, sources)
    assertAllRefused(entries, NOT_HTTP)
    assert.ok(entries.every((e) => e.code === 'UE_REMOTE_URL_INVALID'))
    assert.deepEqual(net.lookups, [])
    assert.deepEqual(net.dials, [])
    assert.equal(origin.connections(), 0)
  })

  test('DNS rebinding: a name that turns into loopback after its first answer is refused on the next connection', async (t) => {
    const { srv, origin, net } = await setup(t)
    // The public answer is fetched and stored: that is a real public image.
    const [first] = await catchList(srv, ['http://rebind.test/a.png'])
    assert.equal(first?.state, 'SUCCESS')
    // The same name again: now loopback, refused at connect time.
    const [second] = await catchList(srv, ['http://rebind.test/a.png'])
    assert.equal(second?.state, FAILED)
    assert.deepEqual(net.lookups, ['rebind.test', 'rebind.test'])
    assert.deepEqual(
      net.dials.map((d) => d.address),
      [PUBLIC],
    )
    assert.deepEqual(net.violations, [])
    assert.deepEqual(origin.paths(), ['/a.png'])
  })

  test('DNS rebinding inside one capture: a redirect back to the same name is checked again', async (t) => {
    const { srv, origin, net } = await setup(t)
    const entries = await catchList(srv, [
      `http://rebind.test/to?url=${encodeURIComponent('http://rebind.test/a.png')}`,
    ])
    assertAllRefused(entries, FAILED)
    assert.deepEqual(net.lookups, ['rebind.test', 'rebind.test'])
    assert.deepEqual(
      net.dials.map((d) => d.address),
      [PUBLIC],
    )
    assert.deepEqual(origin.paths(), ['/to'])
  })

  test('redirects from a public host to internal addresses are refused hop by hop', async (t) => {
    const { srv, origin, net } = await setup(t)
    const internal = [
      `http://127.0.0.1:${origin.port}/a.png`,
      'http://[::1]/',
      'http://169.254.169.254/latest/meta-data/',
      'http://intranet.test/',
      'http://public.test:x@127.0.0.1/',
      'file:///etc/passwd',
      'gopher://127.0.0.1:6379/_INFO',
    ]
    const entries = await catchList(
      srv,
      internal.map((to) => `http://public.test/to?url=${encodeURIComponent(to)}`),
    )
    assertAllRefused(entries, FAILED)
    assert.ok(net.dials.every((d) => d.address === PUBLIC))
    assert.deepEqual(net.violations, [])
  })

  test('the allow-list opens exactly the listed host:port, not the address behind other names or ports', async (t) => {
    const { srv, origin, net } = await setup(t, { allowOrigin: true })
    const internalService = await startInternalService(t)
    const entries = await catchList(srv, [
      origin.url('/a.png'),
      `http://127.0.0.1:${internalService.port}/a.png`,
      `http://localhost:${origin.port}/a.png`,
      `http://rebind.test:${origin.port}/a.png`,
      `http://[::ffff:127.0.0.1]:${origin.port}/a.png`,
    ])
    assert.deepEqual(
      entries.map((e) => e.state),
      ['SUCCESS', FAILED, FAILED, 'SUCCESS', FAILED],
    )
    // rebind.test answered PUBLIC the first time, so it went to the stub's public route.
    assert.deepEqual(
      net.dials.map((d) => `${d.address}:${d.port}`).sort(),
      [`127.0.0.1:${origin.port}`, `${PUBLIC}:${origin.port}`].sort(),
    )
    assert.deepEqual(net.violations, [])
    assert.equal(internalService.connections(), 0)
  })
})

describe('the catch audit line', () => {
  test('each capture is audited with the host, every address the guard checked and the verdict', async (t) => {
    const logger = recordingLogger()
    const { srv, net } = await setup(t, { logger })
    const entries = await catchList(srv, [
      'http://public.test/a.png',
      'http://mixed.test/a.png',
      'http://127.0.0.1/a.png',
    ])
    assert.deepEqual(
      entries.map((e) => e.state),
      ['SUCCESS', FAILED, FAILED],
    )
    assert.deepEqual(net.violations, [])
    const lines = logger.lines
      .filter((l) => l.includes('"audit":"catch"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    const byHost = (host: string) => lines.find((l) => l.host === host)
    assert.deepEqual(byHost('public.test')?.resolved, [`public.test=${PUBLIC}`])
    assert.equal(byHost('public.test')?.verdict, 'stored')
    // The refused answer is marked with `!`, and the capture stops there.
    assert.deepEqual(byHost('mixed.test')?.resolved, [
      `mixed.test=${PUBLIC}`,
      'mixed.test=127.0.0.1!',
    ])
    assert.equal(byHost('mixed.test')?.verdict, 'UE_REMOTE_FORBIDDEN')
    assert.deepEqual(byHost('127.0.0.1')?.resolved, ['127.0.0.1=127.0.0.1!'])
  })
})

describe('the address policy', () => {
  test('only globally routable unicast addresses are public', () => {
    const refused = [
      '127.0.0.1',
      '10.1.2.3',
      '172.31.0.1',
      '192.168.0.1',
      '169.254.169.254',
      '100.100.100.200',
      '0.0.0.0',
      '255.255.255.255',
      '224.0.0.1',
      '203.0.113.10',
      '::1',
      '::',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      'fd12:3456::1',
      'fe80::1',
      '64:ff9b::a00:1',
      '2001:db8::1',
      'ff02::1',
      'not-an-ip',
    ]
    for (const address of refused) assert.equal(isPublicAddress(address), false, address)
    for (const address of [PUBLIC, '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      assert.equal(isPublicAddress(address), true, address)
  })

  test('an allow-list entry matches its exact host and, when given, its exact port', () => {
    const policy = createAddressPolicy(['127.0.0.1:18090', 'images.intranet', '[::1]:8080'])
    assert.equal(policy.allows('127.0.0.1', '127.0.0.1', 18090), true)
    assert.equal(policy.allows('127.0.0.1', '127.0.0.1', 18091), false)
    assert.equal(policy.allows('10.0.0.5', 'images.intranet', 80), true)
    assert.equal(policy.allows('10.0.0.5', 'images.intranet.evil.test', 80), false)
    assert.equal(policy.allows('10.0.0.5', 'evil.test', 80), false)
    assert.equal(policy.allows('127.0.0.1', 'localhost', 18090), false)
    assert.equal(policy.allows('::1', '::1', 8080), true)
    assert.equal(policy.allows('::1', '::1', 80), false)
    assert.equal(policy.allows(PUBLIC, 'anything.test', 443), true)
  })
})
