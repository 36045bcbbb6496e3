import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { connect, createServer as createNetServer, type Socket } from 'node:net'
import sharp from 'sharp'
import { GIF, HTML, png } from './fixtures.js'

/** What the origin saw: one entry per request, in arrival order. */
export interface OriginRequest {
  path: string
  headers: IncomingHttpHeaders
}

export interface OriginServer {
  readonly port: number
  /** `127.0.0.1:PORT` (or its other address), as `catcher.allowHosts` wants it. */
  readonly host: string
  url(path: string): string
  readonly requests: OriginRequest[]
  /** Paths requested so far. */
  paths(): string[]
  /** TCP connections accepted so far (a server that must never be reached checks this). */
  connections(): number
  /** The most `/held.png` requests that were open at the same moment. */
  peakHeld(): number
}

export interface OriginImages {
  png: Buffer
  jpeg: Buffer
  gif: Buffer
  webp: Buffer
  /** A real GIF followed by ASP.NET script text: the `x.gif?.aspx` web-shell upload. */
  shellGif: Buffer
}

/** JPEG and WebP are made with sharp at test time; PNG and GIF come from the fixtures. */
export async function originImages(): Promise<OriginImages> {
  const base = sharp({
    create: { width: 16, height: 12, channels: 3, background: { r: 200, g: 40, b: 40 } },
  })
  return {
    png: png(16, 12),
    jpeg: await base.clone().jpeg().toBuffer(),
    gif: GIF,
    webp: await base.clone().webp().toBuffer(),
    shellGif: Buffer.concat([
      GIF,
      Buffer.from(
        '<%@ Page Language="C#" %><% Response.Write(System.IO.File.ReadAllText("web.config")) %>',
      ),
    ]),
  }
}

/**
 * A fixture image server on 127.0.0.1 (or another loopback address) standing in for the internet (the test allow-lists it, or
 * routes "public" addresses to it with a stub connector). Routes:
 *
 * - `/a.png`, `/photo.jpg`, `/anim.gif`, `/pic.webp`: images with their real types
 * - `/image`: a JPEG with no extension in the URL, served as `application/octet-stream`
 * - `/r/N`: a redirect chain of N hops ending at `/a.png`
 * - `/to?url=U`: a 302 to `U`, whatever it is
 * - `/held.png`: the PNG, answered after 100 ms (to see how many fetches overlap)
 * - `/slow.png`: the start of a PNG, then nothing until the client gives up
 * - `/huge.png`: a PNG header, then chunked bytes without end (no Content-Length)
 * - `/declared-huge.png`: `Content-Length` far above any limit
 * - `/fake.png`: HTML labelled `image/png`
 * - `/shell.gif`: a GIF followed by ASPX script text (`?.aspx` is ignored, as by IIS)
 * - `/gzip.png`: a body with `Content-Encoding: gzip`
 * - `/missing.png`: 404 with a chatty status text
 */
export async function startOriginServer(
  t: { after(fn: () => Promise<void>): void },
  images: OriginImages,
  /** Another loopback address (127.0.0.2) is a host no default `catcherLocalDomain` names. */
  address = '127.0.0.1',
): Promise<OriginServer> {
  const requests: OriginRequest[] = []
  let connections = 0
  let held = 0
  let peakHeld = 0
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://origin.invalid')
    requests.push({ path: url.pathname, headers: req.headers })
    const send = (type: string, body: Buffer) => {
      res.writeHead(200, { 'Content-Type': type, 'Content-Length': body.length })
      res.end(body)
    }
    const hops = /^\/r\/(\d+)$/.exec(url.pathname)
    if (hops) {
      const left = Number(hops[1])
      res.writeHead(302, { Location: left > 1 ? `/r/${left - 1}` : '/a.png' })
      res.end()
      return
    }
    switch (url.pathname) {
      case '/a.png':
        return send('image/png', images.png)
      case '/photo.jpg':
        return send('image/jpeg', images.jpeg)
      case '/anim.gif':
        return send('image/gif', images.gif)
      case '/pic.webp':
        return send('image/webp', images.webp)
      case '/image':
        return send('application/octet-stream', images.jpeg)
      case '/fake.png':
        return send('image/png', HTML)
      case '/shell.gif':
        return send('image/gif', images.shellGif)
      case '/held.png':
        held++
        peakHeld = Math.max(peakHeld, held)
        setTimeout(() => {
          held--
          send('image/png', images.png)
        }, 100)
        return
      case '/to':
        res.writeHead(302, { Location: url.searchParams.get('url') ?? '/' })
        res.end()
        return
      case '/continue.png':
        // Interim answers the client never asked for: clients must skip them.
        res.writeContinue()
        res.writeEarlyHints({ link: '</a.png>; rel=preload' })
        return send('image/png', images.png)
      case '/drip.png': {
        // One byte a second for ever: never idle for long, never done.
        res.writeHead(200, { 'Content-Type': 'image/png' })
        let at = 0
        const drip = setInterval(() => {
          if (res.destroyed) return clearInterval(drip)
          res.write(images.png.subarray(at % images.png.length, (at % images.png.length) + 1))
          at++
        }, 1_000)
        res.once('close', () => clearInterval(drip))
        return
      }
      case '/slow.png':
        res.writeHead(200, { 'Content-Type': 'image/png' })
        res.write(images.png.subarray(0, 16))
        return // never ends; the fetcher's timeout must
      case '/huge.png': {
        res.writeHead(200, { 'Content-Type': 'image/png' })
        res.write(images.png.subarray(0, 16))
        const chunk = Buffer.alloc(64 * 1024, 0x41)
        const pump = () => {
          while (!res.destroyed && res.write(chunk)) {}
          if (!res.destroyed) res.once('drain', pump)
        }
        pump()
        return
      }
      case '/declared-huge.png':
        res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': 1024 ** 3 })
        res.write(images.png)
        return
      case '/gzip.png':
        res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Encoding': 'gzip' })
        res.end(images.png)
        return
      default:
        res.writeHead(404, 'Not Found: secret internal service on port 6379', {
          'Content-Type': 'text/plain',
        })
        res.end('no such image')
    }
  })
  server.on('connection', () => {
    connections++
  })
  await new Promise<void>((resolve) => server.listen(0, address, resolve))
  const { port } = server.address() as AddressInfo
  t.after(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return {
    port,
    host: `${address}:${port}`,
    url: (path) => `http://${address}:${port}${path}`,
    requests,
    paths: () => requests.map((r) => r.path),
    connections: () => connections,
    peakHeld: () => peakHeld,
  }
}

/** Opens a TCP connection to a loopback port: what a stub connector hands back. */
export function connectLoopback(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.off('error', reject)
      resolve(socket)
    })
    socket.once('error', reject)
  })
}

/** A loopback service that must never be reached: it only counts the connections it accepts. */
export async function startInternalService(t: {
  after(fn: () => Promise<void>): void
}): Promise<{ port: number; connections(): number }> {
  let connections = 0
  const server = createServer((_req, res) => res.end('secret'))
  server.on('connection', () => {
    connections++
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return { port: (server.address() as AddressInfo).port, connections: () => connections }
}

/**
 * A raw TCP origin on 127.0.0.1 that answers every request with `body` and closes its side at
 * once (`Connection: close`, then FIN), as many servers and proxies do. It answers once the
 * request's headers and body (by `Content-Length`) are in. Returns `127.0.0.1:PORT`.
 */
export async function startClosingOrigin(
  t: { after(fn: () => Promise<void>): void },
  contentType: string,
  body: Buffer,
): Promise<string> {
  const sockets = new Set<Socket>()
  const server = createNetServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    let request = ''
    const onData = (chunk: Buffer) => {
      request += chunk.toString('latin1')
      const end = request.indexOf('\r\n\r\n')
      if (end < 0) return
      const length = Number(/content-length:\s*(\d+)/i.exec(request.slice(0, end))?.[1] ?? 0)
      if (request.length - end - 4 < length) return
      socket.off('data', onData)
      socket.write(
        `HTTP/1.1 200 OK\r\nContent-Type: ${contentType}\r\n` +
          `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      )
      socket.end(body)
    }
    socket.on('data', onData)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return `127.0.0.1:${(server.address() as AddressInfo).port}`
}
