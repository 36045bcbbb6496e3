import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
import type { Logger } from '../../src/shared/types.js'
import { PDF } from './fixtures.js'
import { multipartBody } from './multipart.js'
import type { TestServer } from './start-server.js'

export const SECRET = 'test-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
export const AUDIENCE = 'ueditor-test'
export const ISSUER = 'https://cms.example'

export const ALICE = 'alice-token-0123456789abcdef'
export const BOB = 'bob-token-0123456789abcdef00'
export const ROOT = 'root-token-0123456789abcdef0'
export const TOKENS = [`alice:${ALICE}`, `bob:${BOB}`, `root:${ROOT}`]

/** An HS256 token as a host app would mint it; `over` changes claims or the key. */
export async function hsToken(
  over: { sub?: string; aud?: string; exp?: number; nbf?: number; admin?: boolean } = {},
  secret = SECRET,
): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  const jwt = new SignJWT(over.admin ? { ueditor_admin: true } : {})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(over.sub ?? 'alice')
    .setAudience(over.aud ?? AUDIENCE)
    .setIssuer(ISSUER)
    .setIssuedAt(now - 10)
    .setExpirationTime(over.exp ?? now + 300)
  if (over.nbf !== undefined) jwt.setNotBefore(over.nbf)
  return jwt.sign(new TextEncoder().encode(secret))
}

/** A token with `alg: none` and no signature: it must never be accepted. */
export function unsignedToken(sub = 'alice'): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url')
  const now = Math.floor(Date.now() / 1000)
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ sub, aud: AUDIENCE, iss: ISSUER, exp: now + 300 })}.`
}

export interface Jwks {
  url: string
  sign(claims: { sub: string; admin?: boolean }): Promise<string>
  /** The public key as a PEM, for the HS256-with-the-public-key confusion attack. */
  publicPem: string
  requests(): number
}

/** A JWKS with one RS256 key, served on a loopback test server as an identity provider would. */
export async function startJwks(t: { after(fn: () => Promise<void>): void }): Promise<Jwks> {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true })
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }
  let requests = 0
  const server = createServer((_req, res) => {
    requests++
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ keys: [jwk] }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const { port } = server.address() as AddressInfo
  const { createPublicKey } = await import('node:crypto')
  const publicPem = createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' })
    .export({ type: 'spki', format: 'pem' })
    .toString()
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    publicPem,
    requests: () => requests,
    sign: (claims) =>
      new SignJWT(claims.admin ? { ueditor_admin: true } : {})
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setSubject(claims.sub)
        .setAudience(AUDIENCE)
        .setExpirationTime('5m')
        .sign(privateKey),
  }
}

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` })

export interface Answer {
  status: number
  body: Record<string, unknown>
}

/** Uploads the PDF fixture through the file action (stored byte for byte: sizes are exact). */
export async function uploadFile(
  srv: TestServer,
  headers: Record<string, string>,
  o: { query?: string; action?: string; field?: string } = {},
): Promise<Answer> {
  const { body, contentType } = multipartBody([
    { name: o.field ?? 'file', value: PDF, filename: 'notes.pdf', contentType: 'application/pdf' },
  ])
  const res = await fetch(srv.action(o.action ?? 'file', o.query ?? ''), {
    method: 'POST',
    headers: { 'content-type': contentType, ...headers },
    body,
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

export async function listFiles(
  srv: TestServer,
  headers: Record<string, string>,
): Promise<Answer & { urls: string[] }> {
  const res = await fetch(srv.action('listFile', '&start=0&size=100'), { headers })
  const body = (await res.json()) as Record<string, unknown>
  const list = (body.list as { url: string }[] | undefined) ?? []
  return { status: res.status, body, urls: list.map((e) => e.url) }
}

export async function deleteFile(
  srv: TestServer,
  headers: Record<string, string>,
  url: string,
): Promise<Answer> {
  const res = await fetch(srv.action('deletefile'), {
    method: 'POST',
    headers,
    body: new URLSearchParams({ url }),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

/** A logger that keeps every record as one JSON line, to search for leaked secrets. */
export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = []
  const write = (level: string) => (o: object, msg?: string) => {
    lines.push(JSON.stringify({ level, msg, ...o }))
  }
  return {
    lines,
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
  }
}

/** Parses `/**\/cb({...});` and checks the callback name. */
export function jsonpBody(text: string, callback: string): Record<string, unknown> {
  const prefix = `/**/${callback}(`
  if (!text.startsWith(prefix) || !text.endsWith(');'))
    throw new Error(`not a JSONP answer for ${callback}: ${text.slice(0, 80)}`)
  return JSON.parse(text.slice(prefix.length, -2)) as Record<string, unknown>
}
